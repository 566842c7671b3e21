package server

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"net"
	"net/http"
	"net/url"
	"strings"
)

// The auth model of the TCP listener (the unix socket has none: its file is owner-only).
//
//   - One secret, the token. API clients send it as "Authorization: Bearer TOKEN". A browser
//     trades it once at /ui/login for a session cookie (HttpOnly, SameSite=Strict) holding
//     HMAC(token, "session"), so the token itself never sits in a cookie jar.
//   - Reads (GET, HEAD) are open on a loopback listener, as the issue allows: anyone who can
//     reach 127.0.0.1 can already read the database file's owner's runs with `wend list`. On
//     a listener bound elsewhere (--allow-remote) every request needs the token.
//   - Mutations always need the token or the session. A mutation made with the session (a
//     form post from the UI) must also come from the same origin (Origin, else Referer, and
//     Sec-Fetch-Site when sent) and carry the CSRF value HMAC(token, "csrf"|session) the
//     page embedded; a bearer request cannot be forged cross-site, as a browser never adds
//     that header on its own.
//   - On loopback the Host header must name a loopback host, so a DNS-rebinding page cannot
//     read the open endpoints through the victim's browser.
//   - Every body is capped (maxBody; UI forms at MaxFormBody).

const (
	sessionCookie = "wend_session"
	// CSRFField is the form field a session's mutation carries its CSRF value in.
	CSRFField = "csrf"
	// MaxFormBody caps a UI form post: a signal's JSON and a reason, no more.
	MaxFormBody = 256 << 10
	// LoginPath is where a browser trades the token for a session; the guard answers it.
	LoginPath = "/ui/login"
)

// UI is a web UI served beside the API (package server/web makes one). Over TCP it sits
// behind the guard, which answers its login page and shows that page where a UI path needs
// a session.
type UI interface {
	http.Handler // its pages; a path that is none of them goes on to the API
	// LoginPage answers with the form that trades the token for a session; why says what
	// went wrong with the last try ("" for nothing).
	LoginPage(w http.ResponseWriter, status int, why string)
	// Home is the page a new session lands on.
	Home() string
}

// Auth is what the guard tells the handlers behind it, through the request's context.
type Auth struct {
	Authed bool   // the request carries the token or a session
	CSRF   string // the value a form must echo in CSRFField; "" when not Authed by session
}

type authKey struct{}

// AuthOf returns the guard's verdict and whether a guard gave one. A request that passed no
// guard came over the unix socket, whose permissions are the check: it counts as authorised
// and needs no CSRF value.
func AuthOf(r *http.Request) (Auth, bool) {
	a, ok := r.Context().Value(authKey{}).(Auth)
	if !ok {
		return Auth{Authed: true}, false
	}
	return a, true
}

// guard enforces the model above in front of next.
type guard struct {
	next     http.Handler
	ui       UI // nil: no UI, so no login page either
	token    []byte
	session  string // the cookie value a valid session holds
	loopback bool
}

func newGuard(token string, loopback bool, ui UI, next http.Handler) *guard {
	return &guard{next: next, ui: ui, token: []byte(token), session: hmacHex(token, "session"), loopback: loopback}
}

// mac is hex HMAC-SHA256 of msg under key.
func hmacHex(key, msg string) string {
	h := hmac.New(sha256.New, []byte(key))
	h.Write([]byte(msg))
	return hex.EncodeToString(h.Sum(nil))
}

func secretEqual(a, b string) bool { return subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1 }

func (g *guard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if g.loopback && !loopbackHost(r.Host) {
		writeError(w, errorf(http.StatusMisdirectedRequest, CodeBadRequest,
			"host "+r.Host+" is not a loopback name; this server answers only on loopback"))
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxBody)
	if r.URL.Path == LoginPath && g.ui != nil {
		g.login(w, r)
		return
	}
	bearer := g.bearer(r)
	session := !bearer && g.hasSession(r)
	// A backup is no cheap read: a copy of the whole file, after a checkpoint (backup.go).
	read := (r.Method == http.MethodGet || r.Method == http.MethodHead) && r.URL.Path != backupPath
	switch {
	case bearer:
	case session && read:
	case session:
		if why := g.checkCSRF(r); why != "" {
			writeError(w, errorf(http.StatusForbidden, CodeForbidden, "cross-site request refused: "+why))
			return
		}
	case read && g.loopback:
	default:
		g.deny(w, r)
		return
	}
	a := Auth{Authed: bearer || session}
	if session {
		a.CSRF = g.csrf()
	}
	g.next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), authKey{}, a)))
}

func (g *guard) bearer(r *http.Request) bool {
	h := r.Header.Get("Authorization")
	t, ok := strings.CutPrefix(h, "Bearer ")
	return ok && subtle.ConstantTimeCompare([]byte(t), g.token) == 1
}

func (g *guard) hasSession(r *http.Request) bool {
	c, err := r.Cookie(sessionCookie)
	return err == nil && secretEqual(c.Value, g.session)
}

// csrf is the value a session's forms carry: derived from the session, so it changes with the
// token and a value leaked from one server is useless on another.
func (g *guard) csrf() string { return hmacHex(string(g.token), "csrf|"+g.session) }

// checkCSRF returns why a session's mutation is refused, or "".
func (g *guard) checkCSRF(r *http.Request) string {
	if site := r.Header.Get("Sec-Fetch-Site"); site != "" && site != "same-origin" && site != "none" {
		return "Sec-Fetch-Site is " + site
	}
	if !sameOrigin(r) {
		return "the Origin (or Referer) is not this server"
	}
	if err := r.ParseForm(); err != nil {
		return "unreadable form: " + err.Error()
	}
	if !secretEqual(r.PostForm.Get(CSRFField), g.csrf()) {
		return "missing or wrong CSRF value; reload the page"
	}
	return ""
}

// sameOrigin checks Origin, else Referer, against the Host the request was sent to. A
// request with neither is refused: every browser sends one of them on a form post.
func sameOrigin(r *http.Request) bool {
	src := r.Header.Get("Origin")
	if src == "" || src == "null" {
		src = r.Header.Get("Referer")
	}
	u, err := url.Parse(src)
	if src == "" || err != nil {
		return false
	}
	return (u.Scheme == "http" || u.Scheme == "https") && strings.EqualFold(u.Host, r.Host)
}

// deny answers 401: a JSON error for the API and /metrics, the login page for the UI.
func (g *guard) deny(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("WWW-Authenticate", `Bearer realm="wend"`)
	if g.ui != nil && (strings.HasPrefix(r.URL.Path, "/ui/") || r.URL.Path == "/") {
		g.ui.LoginPage(w, http.StatusUnauthorized, "")
		return
	}
	writeError(w, errorf(http.StatusUnauthorized, CodeUnauthorized, "this request needs the token: send Authorization: Bearer TOKEN"))
}

// login trades the token for the session cookie: GET /ui/login?token=T (the link wend serve
// prints) or a POST of the login form. A POST is checked for same origin, as it sets state.
func (g *guard) login(w http.ResponseWriter, r *http.Request) {
	var tok string
	switch r.Method {
	case http.MethodGet, http.MethodHead:
		tok = r.URL.Query().Get("token")
		if tok == "" {
			g.ui.LoginPage(w, http.StatusOK, "")
			return
		}
	case http.MethodPost:
		if !sameOrigin(r) {
			writeError(w, errorf(http.StatusForbidden, CodeForbidden, "cross-site login refused"))
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, MaxFormBody)
		if err := r.ParseForm(); err != nil {
			g.ui.LoginPage(w, http.StatusBadRequest, "unreadable form")
			return
		}
		tok = r.PostForm.Get("token")
	default:
		writeError(w, errorf(http.StatusMethodNotAllowed, CodeBadRequest, "login takes GET or POST"))
		return
	}
	if subtle.ConstantTimeCompare([]byte(tok), g.token) != 1 {
		g.ui.LoginPage(w, http.StatusUnauthorized, "wrong token")
		return
	}
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: g.session, Path: "/", HttpOnly: true,
		SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil})
	http.Redirect(w, r, g.ui.Home(), http.StatusSeeOther)
}

// loopbackHost says whether a Host header names this machine's loopback.
func loopbackHost(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.Trim(host, "[]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Error codes of the guard (beside errors.go's, kept here with the model they belong to).
const (
	CodeUnauthorized = "unauthorized" // no token or session where one is needed (401)
	CodeForbidden    = "forbidden"    // a session's mutation without same origin and CSRF value (403)
)
