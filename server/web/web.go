// Package web is wend's web UI: server-rendered pages (html/template), a stylesheet and one
// small script that refreshes a page's live part by polling. Everything is embedded, so the
// binary serves it with no external assets, and a strict Content-Security-Policy allows only
// those: a run's data (activity outputs, error texts, signal payloads — all untrusted) reaches
// the page only through html/template's contextual escaping, never as template.HTML (the one
// markup a page takes whole is the workflow's drawing, which spec/graph writes with every text
// XML-escaped), and even a bug there could not run an inline script.
//
// The UI reads and acts only through a *server.Server's methods, as the API does, and hands
// every path that is not its own to that Server, so one handler serves both: wend serve puts
// it on the unix socket and, behind the token guard, on TCP (server.TCPOptions.UI).
//
// Routes (over TCP the guard of package server comes first and answers /ui/login; each is
// registered with the access it needs there: the pages a token, the forms the act token,
// the stylesheet, script, login form and redirects none on loopback):
//
//	GET  /, /ui/                         redirect to /ui/runs
//	GET  /ui/runs?status=S&workflow=NAME&q=TEXT&where=FILTER&compensated=1&page=N  the runs list (?partial=live: its live part)
//	POST /ui/runs                        start a registered workflow (workflow, input, id)
//	GET  /ui/runs/{id}?expand=STEP&apage=N&epage=N&events=compact  a run (workflow id: its newest run; or a run id)
//	GET  /ui/runs/{id}/export            the history export as a download
//	POST /ui/runs/{id}/{action}          signal (name, data), cancel, terminate (reason), retry, repair, migrate (to)
//	GET  /ui/schedules                   the schedules, their next and recent fires (read only)
//	GET  /ui/workflows[/{name}[/graph.svg]]  the registered workflows: version, graph, start form
//	GET  /ui/login?token=T, POST /ui/login  trade the read or act token for its session cookie
//	GET  /ui/static/...                  style.css, app.js
package web

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"time"

	"github.com/wendflow/wend/runview"
	"github.com/wendflow/wend/server"
)

//go:embed ui
var uiFiles embed.FS

const (
	uiRunsPath = "/ui/runs"
	staticPath = "/ui/static/"
)

// csp allows the page's own stylesheet and script and nothing else; form-action keeps forms
// on this origin, frame-ancestors stops click-jacking.
const csp = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; " +
	"form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

var uiFuncs = template.FuncMap{
	"tries": runview.TriesText,
	"after": runview.MessageAfter,
	"blank": func(s string) bool { return strings.TrimSpace(s) == "" },
	"stamp": func(t time.Time) string {
		if t.IsZero() {
			return ""
		}
		return t.UTC().Format("2006-01-02 15:04:05.000")
	},
	"dur": func(d time.Duration) string {
		if d <= 0 {
			return ""
		}
		return d.Round(time.Millisecond).String()
	},
	"since": func(a, b time.Time) string {
		if a.IsZero() || b.IsZero() {
			return ""
		}
		return b.Sub(a).Round(time.Millisecond).String()
	},
	"zoned":  zoned,
	"json":   prettyJSON,
	"cjson":  compactJSON,
	"clip":   clipText,
	"indent": func(n int) string { return fmt.Sprintf("d%d", min(n, 9)) },
	"add":    func(a, b int) int { return a + b },
	"head":   head,
	"pair":   func(v *runView, a any) activityCard { return activityCard{V: v, X: a} },
	"more":   func(v any, n int) int { return max(0, reflect.ValueOf(v).Len()-n) },
}

// head is the first n elements of a slice, so a table of a long run stays bounded.
func head(v any, n int) any {
	s := reflect.ValueOf(v)
	if s.Kind() != reflect.Slice || s.Len() <= n {
		return v
	}
	return s.Slice(0, n).Interface()
}

// pages are parsed once; each page template is the layout plus its own file.
var pages = map[string]*template.Template{
	"runs":  parsePage("runs.html"),
	"run":   parsePage("run.html"),
	"login": parsePage("login.html"),
	"error": parsePage("error.html"),
}

func parsePage(name string) *template.Template {
	return template.Must(template.New(name).Funcs(uiFuncs).ParseFS(uiFiles, "ui/layout.html", "ui/form.html", "ui/"+name))
}

// UI serves the web UI over a Server; it implements server.UI.
type UI struct {
	s   *server.Server
	mux *server.Router
	// comp remembers which closed runs were compensated (a closed history no longer changes).
	compMu sync.Mutex
	comp   map[string]bool
	// runs keeps the folds of the runs whose pages were read last (runCache).
	runs *runCache
}

// New makes the UI of s. Paths that are not the UI's go to s.
func New(s *server.Server) *UI {
	u := &UI{s: s, mux: server.NewRouter(), runs: newRunCache()}
	u.routes(u.mux)
	u.mux.Inner(s)
	return u
}

// ServeHTTP serves a UI page, or hands the request to the Server.
func (u *UI) ServeHTTP(w http.ResponseWriter, r *http.Request) { u.mux.ServeHTTP(w, r) }

// Routes lists the UI's routes, then the API's, with the access each needs (server.Routed).
func (u *UI) Routes() []server.Route { return u.mux.Routes() }

// Need is the access a request to the UI or the API needs (server.Routed).
func (u *UI) Need(r *http.Request) server.Access { return u.mux.Need(r) }

// LoginPage shows the token form (server.UI).
func (u *UI) LoginPage(w http.ResponseWriter, status int, why string) { renderLogin(w, status, why) }

// Home is the runs list, where a new session lands (server.UI).
func (u *UI) Home() string { return uiRunsPath }

// routes registers the UI's pages with the access each needs over TCP: the pages show run
// data, so they need a token; the stylesheet, script, login form and redirects do not.
func (u *UI) routes(m *server.Router) {
	static, _ := fs.Sub(uiFiles, "ui/static")
	m.Handle("GET "+staticPath, server.AccessOpen, http.StripPrefix(staticPath, http.FileServerFS(static)))
	m.HandleFunc("GET /{$}", server.AccessOpen, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, uiRunsPath, http.StatusSeeOther)
	})
	m.HandleFunc("GET /ui/{$}", server.AccessOpen, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, uiRunsPath, http.StatusSeeOther)
	})
	m.HandleFunc("GET "+server.LoginPath, server.AccessOpen, func(w http.ResponseWriter, r *http.Request) {
		renderLogin(w, http.StatusOK, "") // over TCP the guard answers first; here: no login needed
	})
	m.HandleFunc("GET "+uiRunsPath, server.AccessRead, u.list)
	m.HandleFunc("POST "+uiRunsPath, server.AccessAct, u.start)
	m.HandleFunc("GET "+uiRunsPath+"/{id}", server.AccessRead, u.run)
	m.HandleFunc("GET "+uiRunsPath+"/{id}/export", server.AccessRead, u.export)
	m.HandleFunc("POST "+uiRunsPath+"/{id}/{action}", server.AccessAct, u.action)
	m.HandleFunc("GET "+uiSchedulesPath, server.AccessRead, u.schedules) // schedules.go
	u.batchRoutes(m)                                                     // batches.go
	u.workflowRoutes(m)                                                  // workflows.go
}

// page is what every page template reads.
type uiPage struct {
	Title string
	Auth  server.Auth
	Guard bool   // served behind the TCP guard (else the unix socket)
	Flash string // a fixed confirmation text
	Error string // why the last action failed
}

func newUIPage(r *http.Request, title string) uiPage {
	a, guarded := server.AuthOf(r)
	return uiPage{Title: title, Auth: a, Guard: guarded}
}

// render executes a page (or one of its named fragments) into a buffer first, so a template
// error becomes a 500 instead of half a page.
func renderPage(w http.ResponseWriter, status int, name, fragment string, data any) {
	t := pages[name]
	var buf bytes.Buffer
	var err error
	if fragment != "" {
		err = t.ExecuteTemplate(&buf, fragment, data)
	} else {
		err = t.ExecuteTemplate(&buf, "layout", data)
	}
	if err != nil {
		http.Error(w, "render "+name+": "+err.Error(), http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Security-Policy", csp)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "same-origin")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

// renderLogin shows the token form.
func renderLogin(w http.ResponseWriter, status int, why string) {
	renderPage(w, status, "login", "", uiPage{Title: "Log in", Error: why})
}

// renderError shows an error page for a UI request.
func renderError(w http.ResponseWriter, r *http.Request, err error) {
	e := server.ErrorOf(err)
	p := newUIPage(r, "Error")
	p.Error = e.Message
	renderPage(w, e.Status, "error", "", p)
}

// prettyJSON indents a JSON value for a <pre>. It re-encodes without Go's HTML escaping, so
// "<" reads as "<" rather than \u003c: the page shows what the run produced, and
// html/template escapes it, as the text it returns is never trusted as markup.
func prettyJSON(raw json.RawMessage) string { return reencode(raw, "  ", 20000) }

// compactJSON is prettyJSON on one line, clipped to n bytes, for the timeline.
func compactJSON(raw json.RawMessage, n int) string { return reencode(raw, "", n) }

func reencode(raw json.RawMessage, indent string, n int) string {
	if len(raw) == 0 {
		return ""
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber() // keep numbers exactly as written
	var v any
	if dec.Decode(&v) != nil {
		return clipText(string(raw), n)
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", indent)
	if enc.Encode(v) != nil {
		return clipText(string(raw), n)
	}
	return clipText(strings.TrimSuffix(b.String(), "\n"), n)
}

// clipText shortens s to at most n bytes on a rune boundary, marking the cut.
func clipText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8Start(s[cut]) {
		cut--
	}
	return s[:cut] + fmt.Sprintf(" … (%d more bytes)", len(s)-cut)
}

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }

// plain reports whether the request asks for a live fragment rather than the whole page.
func fragmentOf(r *http.Request) string { return strings.TrimSpace(r.URL.Query().Get("partial")) }
