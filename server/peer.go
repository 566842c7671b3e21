package server

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/wendflow/wend/api"
)

// The control socket acts for whoever connects, with no token: the check is who connects.
// Its file is 0600, but a file mode is checked only when a path is opened, and a socket is
// open to the umask's mode between bind and chmod; so where the kernel names a connection's
// peer (SO_PEERCRED on Linux, LOCAL_PEERCRED on macOS and FreeBSD), a peer that is not the
// serving user (or root, who can read the database anyway) is answered 403 and closed.
// Elsewhere the file mode is the check.

// ownerOnly accepts the connections of allowed users and refuses every other.
type ownerOnly struct {
	net.Listener
	allow func(uid int) bool
}

// servingUser allows serve's own user and root.
func servingUser(uid int) bool { return uid == os.Getuid() || uid == 0 }

func (l ownerOnly) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		uid, known, err := peerUID(c)
		if err == nil && (!known || l.allow(uid)) {
			return c, nil
		}
		go refusePeer(c, uid, err) // off the accept loop: a slow peer must not stall the owner
	}
}

// refusePeer tells a refused peer why, in HTTP, and closes its connection. It reads the
// request first (bounded in size and time): a peer still writing when the connection closes
// would see a broken pipe instead of the answer.
func refusePeer(c net.Conn, uid int, err error) {
	defer c.Close()
	_ = c.SetReadDeadline(time.Now().Add(time.Second))
	if req, rerr := http.ReadRequest(bufio.NewReader(io.LimitReader(c, 1<<20))); rerr == nil {
		_, _ = io.Copy(io.Discard, req.Body)
	}
	msg := fmt.Sprintf("this socket serves only the user running wend (uid %d); yours is %d", os.Getuid(), uid)
	if err != nil {
		msg = "cannot tell who connected: " + err.Error()
	}
	body := fmt.Sprintf(`{"error":{"code":%q,"message":%q}}`+"\n", api.CodeForbidden, msg)
	_ = c.SetWriteDeadline(time.Now().Add(time.Second))
	_, _ = fmt.Fprintf(c, "HTTP/1.1 403 Forbidden\r\nContent-Type: application/json\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s", len(body), body)
}
