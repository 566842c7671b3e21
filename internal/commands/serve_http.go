package commands

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"strings"

	"github.com/wendflow/wend/api"
	"github.com/wendflow/wend/internal/inputfile"
	"github.com/wendflow/wend/server"
	"github.com/wendflow/wend/server/web"
)

// httpFlags are wend serve's TCP listener flags.
type httpFlags struct {
	listen        *string
	allowRemote   *bool
	tokenFile     *string
	readTokenFile *string
	openReads     *bool
}

// defaultListen keeps the UI and API on this machine unless the operator says otherwise.
const defaultListen = "127.0.0.1:8080"

func addHTTPFlags(fs *flag.FlagSet) httpFlags {
	return httpFlags{
		listen:        fs.String("listen", defaultListen, ""),
		allowRemote:   fs.Bool("allow-remote", false, ""),
		tokenFile:     fs.String("token-file", "", ""),
		readTokenFile: fs.String("read-token-file", "", ""),
		openReads:     fs.Bool("open-reads", false, ""),
	}
}

// openReadsConflict refuses --open-reads where it means nothing or too much, before anything
// starts: with no HTTP listener, or with --allow-remote (reads open to the network).
func openReadsConflict(f httpFlags) string {
	switch {
	case !*f.openReads:
		return ""
	case *f.listen == "off" || *f.listen == "":
		return "--open-reads is for the HTTP listener, and --http is off"
	case *f.allowRemote:
		return "--open-reads is for a loopback address only; with --allow-remote every request needs a token"
	}
	return ""
}

// tokenPath and readTokenPath are where wend serve keeps the tokens it generates: beside the
// database, like the socket, so every process serving that database finds the same ones.
func tokenPath(dbPath string) string     { return dbPath + ".token" }
func readTokenPath(dbPath string) string { return dbPath + ".read-token" }

// tokenSource says where a token comes from: its flag's file, else its variable, else a file
// beside the database generated on first start (path ""; one made for this process alone).
type tokenSource struct {
	file, env, path string
}

// apiToken finds the act token: --token-file, else $WEND_TOKEN, else the database's token
// file. generated reports that it was just made; explicit that the operator gave it
// (--allow-remote wants one chosen on purpose).
func apiToken(e *env, dbPath, tokenFile string) (token, from string, generated, explicit bool, err error) {
	return findToken(e, tokenSource{file: tokenFile, env: "WEND_TOKEN", path: tokenPath(dbPath)})
}

// readAPIToken finds the read token: --read-token-file, else $WEND_READ_TOKEN, else the
// database's read-token file.
func readAPIToken(e *env, dbPath, tokenFile string) (token, from string, generated, explicit bool, err error) {
	return findToken(e, tokenSource{file: tokenFile, env: "WEND_READ_TOKEN", path: readTokenPath(dbPath)})
}

func findToken(e *env, src tokenSource) (token, from string, generated, explicit bool, err error) {
	if src.file != "" {
		token, err = readToken(src.file)
		return token, src.file, false, true, err
	}
	if t := strings.TrimSpace(e.getenv(src.env)); t != "" {
		if err := server.CheckToken(t); err != nil {
			return "", "$" + src.env, false, true, fmt.Errorf("$%s: %w", src.env, err)
		}
		return t, "$" + src.env, false, true, nil
	}
	if src.path == "" {
		token, err = newToken()
		return token, "", true, false, err
	}
	p := src.path
	token, err = readToken(p)
	if err == nil || !errors.Is(err, os.ErrNotExist) {
		return token, p, false, false, err
	}
	if token, err = newToken(); err != nil {
		return "", p, false, false, err
	}
	// O_EXCL: two servers racing to generate never overwrite each other's token; 0600: the
	// file is the secret.
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

// newToken is 256 random bits in hex.
func newToken() (string, error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", errors.New("generate an API token: " + err.Error())
	}
	return hex.EncodeToString(b[:]), nil
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
func (d *driver) serveHTTP(f httpFlags, workflows []api.Workflow) (*server.TCPServer, error) {
	if *f.listen == "off" || *f.listen == "" {
		return nil, nil
	}
	tokens, err := serveTokens(d.e, d.path, f)
	if err != nil {
		return nil, err
	}
	s := d.Server(workflows) // the workflows registered before listening, as for the socket
	t, err := server.ListenTCP(s, tokens.options(f, d.Meter.Handler(d.Store, d.Engine), web.New(s)))
	if err != nil {
		return nil, err
	}
	tokens.report(d.e, t.URL(), f)
	return t, nil
}

// servedTokens are the two tokens of a TCP listener and where each came from.
type servedTokens struct {
	act, actFrom   string
	read, readFrom string
	actGenerated   bool // the act token was made now (first start, or for this process)
	readGenerated  bool
}

// serveTokens finds both tokens for the database at dbPath ("" with --temporal: none kept,
// each generated for this process unless given).
func serveTokens(e *env, dbPath string, f httpFlags) (servedTokens, error) {
	var t servedTokens
	var explicit bool
	var err error
	if dbPath == "" {
		t.act, t.actFrom, t.actGenerated, explicit, err = findToken(e, tokenSource{file: *f.tokenFile, env: "WEND_TOKEN"})
	} else {
		t.act, t.actFrom, t.actGenerated, explicit, err = apiToken(e, dbPath, *f.tokenFile)
	}
	if err != nil {
		return t, err
	}
	if *f.allowRemote && !explicit {
		return t, errors.New("--allow-remote needs a token chosen on purpose: --token-file FILE or WEND_TOKEN")
	}
	if dbPath == "" {
		t.read, t.readFrom, t.readGenerated, _, err = findToken(e, tokenSource{file: *f.readTokenFile, env: "WEND_READ_TOKEN"})
	} else {
		t.read, t.readFrom, t.readGenerated, _, err = readAPIToken(e, dbPath, *f.readTokenFile)
	}
	return t, err
}

func (t servedTokens) options(f httpFlags, metrics http.Handler, ui server.UI) server.TCPOptions {
	return server.TCPOptions{Addr: *f.listen, Token: t.act, ReadToken: t.read, OpenReads: *f.openReads,
		AllowRemote: *f.allowRemote, Metrics: metrics, UI: ui}
}

// report says where the UI is, which token does what, and whether reads are open.
func (t servedTokens) report(e *env, url string, f httpFlags) {
	switch {
	case t.actGenerated && t.actFrom == "":
		fmt.Fprintf(e.stderr, "wend: generated an act token for this process (give --token-file to keep one): %s\n", t.act)
		fmt.Fprintf(e.stderr, "wend: web UI at %s/ui/login?token=%s\n", url, t.act)
	case t.actGenerated:
		fmt.Fprintf(e.stderr, "wend: generated an API token in %s (first start): %s\n", t.actFrom, t.act)
		fmt.Fprintf(e.stderr, "wend: web UI at %s/ui/login?token=%s\n", url, t.act)
	default:
		fmt.Fprintf(e.stderr, "wend: web UI at %s/ui/runs (log in with the act token from %s)\n", url, t.actFrom)
	}
	switch {
	case t.readGenerated && t.readFrom == "":
		fmt.Fprintf(e.stderr, "wend: generated a read token for this process (give --read-token-file to keep one): %s\n", t.read)
	case t.readGenerated:
		fmt.Fprintf(e.stderr, "wend: generated a read token in %s (first start): it reads runs, the UI and exports, and acts on nothing\n", t.readFrom)
	default:
		fmt.Fprintf(e.stderr, "wend: read token from %s: it reads runs, the UI and exports, and acts on nothing\n", t.readFrom)
	}
	fmt.Fprintf(e.stderr, "wend: HTTP API at %s/v1, metrics at %s/metrics\n", url, url)
	if *f.openReads {
		fmt.Fprintf(e.stderr, "wend: --open-reads: reads need no token on %s: every user of this machine can read every run, its input and output\n", url)
	}
}
