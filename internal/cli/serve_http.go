package cli

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/wendflow/wend/internal/inputfile"
	"github.com/wendflow/wend/server"
	"github.com/wendflow/wend/server/web"
)

// httpFlags are wend serve's TCP listener flags.
type httpFlags struct {
	listen      *string
	allowRemote *bool
	tokenFile   *string
}

// defaultListen keeps the UI and API on this machine unless the operator says otherwise.
const defaultListen = "127.0.0.1:8080"

func addHTTPFlags(fs *flag.FlagSet) httpFlags {
	return httpFlags{
		listen:      fs.String("listen", defaultListen, ""),
		allowRemote: fs.Bool("allow-remote", false, ""),
		tokenFile:   fs.String("token-file", "", ""),
	}
}

// tokenPath is where wend serve keeps the token it generates: beside the database, like the
// socket, so every process serving that database finds the same one.
func tokenPath(dbPath string) string { return dbPath + ".token" }

// apiToken finds the token: --token-file, else $WEND_TOKEN, else the database's token file,
// which is generated on first start. generated reports that it was just made; explicit that
// the operator gave it (--allow-remote wants one chosen on purpose).
func apiToken(e *env, dbPath, tokenFile string) (token, from string, generated, explicit bool, err error) {
	if tokenFile != "" {
		token, err = readToken(tokenFile)
		return token, tokenFile, false, true, err
	}
	if t := strings.TrimSpace(e.getenv("WEND_TOKEN")); t != "" {
		if err := server.CheckToken(t); err != nil {
			return "", "$WEND_TOKEN", false, true, fmt.Errorf("$WEND_TOKEN: %w", err)
		}
		return t, "$WEND_TOKEN", false, true, nil
	}
	p := tokenPath(dbPath)
	token, err = readToken(p)
	if err == nil || !errors.Is(err, os.ErrNotExist) {
		return token, p, false, false, err
	}
	var b [32]byte
	_, _ = rand.Read(b[:])
	token = hex.EncodeToString(b[:])
	// O_EXCL: two servers racing to generate never overwrite each other's token.
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", p, false, false, fmt.Errorf("write token file: %w", err)
	}
	if _, err := f.WriteString(token + "\n"); err != nil {
		f.Close()
		return "", p, false, false, fmt.Errorf("write token file: %w", err)
	}
	return token, p, true, false, f.Close()
}

func readToken(path string) (string, error) {
	b, err := inputfile.Read(path, 4096) // a token is 32 to a few hundred characters
	if err != nil {
		return "", fmt.Errorf("read token: %w", err)
	}
	t := strings.TrimSpace(string(b))
	if t == "" {
		return "", fmt.Errorf("read token: %s is empty", path)
	}
	if err := server.CheckToken(t); err != nil {
		return "", fmt.Errorf("read token: %s: %w", path, err)
	}
	return t, nil
}

// serveHTTP starts the TCP listener (API, web UI, /metrics) unless --listen is off.
func (d *driver) serveHTTP(f httpFlags, workflows []server.Workflow) (*server.TCPServer, error) {
	if *f.listen == "off" || *f.listen == "" {
		return nil, nil
	}
	token, from, generated, explicit, err := apiToken(d.e, d.path, *f.tokenFile)
	if err != nil {
		return nil, err
	}
	if *f.allowRemote && !explicit {
		return nil, errors.New("--allow-remote needs a token chosen on purpose: --token-file FILE or WEND_TOKEN")
	}
	s := server.New(d.eng, d.store)
	d.serveSchedules(s)
	d.serveBatches(s)
	if len(workflows) > 0 {
		s.SetWorkflows(workflows) // before listening, as for the socket
	}
	d.serveRoll(s)
	t, err := server.ListenTCP(s, server.TCPOptions{Addr: *f.listen, Token: token,
		AllowRemote: *f.allowRemote, Metrics: d.meter.Handler(d.store, d.eng), UI: web.New(s)})
	if err != nil {
		return nil, err
	}
	if generated {
		fmt.Fprintf(d.e.stderr, "wend: generated an API token in %s (first start): %s\n", from, token)
		fmt.Fprintf(d.e.stderr, "wend: web UI at %s/ui/login?token=%s\n", t.URL(), token)
	} else {
		fmt.Fprintf(d.e.stderr, "wend: web UI at %s/ui/runs (log in with the token from %s)\n", t.URL(), from)
	}
	fmt.Fprintf(d.e.stderr, "wend: HTTP API at %s/v1, metrics at %s/metrics\n", t.URL(), t.URL())
	return t, nil
}
