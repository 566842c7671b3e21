package builtin

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	sdk "github.com/wendflow/wend/sdk/go"
)

// The bounds of a request whose input sets no timeout (docs/language.md, http); variables
// so that tests can shorten them.
var (
	// defaultTimeout bounds the whole request: connecting, sending, waiting for the
	// response and reading its body.
	defaultTimeout = 5 * time.Minute
	// idleTimeout bounds each wait for the next bytes of the response body, whatever the
	// timeout: a body that stops coming fails the try (retryably) instead of holding it.
	idleTimeout = time.Minute
)

// errIdle is the cause of a request cancelled because its body stopped coming.
var errIdle = errors.New("idle")

// idleBody reads a response body, cancelling the request when a read waits idle for
// longer than idle.
type idleBody struct {
	r     io.Reader
	timer *time.Timer
	idle  time.Duration
}

func newIdleBody(r io.Reader, idle time.Duration, cancel context.CancelCauseFunc) *idleBody {
	return &idleBody{r: r, idle: idle, timer: time.AfterFunc(idle, func() { cancel(errIdle) })}
}

func (b *idleBody) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if n > 0 {
		b.timer.Reset(b.idle)
	}
	return n, err
}

func (b *idleBody) stop() { b.timer.Stop() }

// maxRedirects is how many redirects a request follows, as Go's client does by default.
const maxRedirects = 10

// redirects is a request's redirect policy. Go's client drops only Authorization and
// cookies on a redirect to another host; any header the input set may carry a secret
// (X-Api-Key: ${{ secrets.key }}), so every one of them is dropped when a redirect leaves
// the first request's scheme and host. A redirect that would send the request body there
// (307, 308) is not followed at all: the body may carry a secret too.
type redirects struct {
	headers map[string]string

	mu      sync.Mutex
	refused string // the host a body was not sent to; "" when none
}

func (rd *redirects) check(req *http.Request, via []*http.Request) error {
	if len(via) >= maxRedirects {
		return fmt.Errorf("stopped after %d redirects", maxRedirects)
	}
	first := via[0]
	if strings.EqualFold(first.URL.Scheme, req.URL.Scheme) && strings.EqualFold(first.URL.Host, req.URL.Host) {
		return nil
	}
	for k := range rd.headers {
		req.Header.Del(k)
	}
	if req.Response != nil && (req.Response.StatusCode == http.StatusTemporaryRedirect || req.Response.StatusCode == http.StatusPermanentRedirect) &&
		first.GetBody != nil && first.ContentLength != 0 {
		rd.mu.Lock()
		rd.refused = req.URL.Host
		rd.mu.Unlock()
		return http.ErrUseLastResponse
	}
	return nil
}

// refusal is the failure of a request whose body a redirect would have sent to another
// host; nil when there was none.
func (rd *redirects) refusal(req *http.Request) error {
	rd.mu.Lock()
	defer rd.mu.Unlock()
	if rd.refused == "" {
		return nil
	}
	return sdk.NonRetryable("RedirectRefused", fmt.Sprintf("%s %s: redirected to %s with the request body; not followed, since the body would go to another host",
		req.Method, redact(req.URL), rd.refused))
}
