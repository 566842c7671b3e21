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

	"github.com/wendflow/wend/api"
)

// The auth model of the TCP listener (the unix socket has none: only the serving user can
// connect to it, unix.go).
//
//   - Two secrets. The act token may do everything; the read token only what returns data
//     (a route's Access, access.go). API clients send one as "Authorization: Bearer TOKEN".
//     A browser trades either once at /ui/login for a session cookie (HttpOnly,
//     SameSite=Strict) holding HMAC(token, label), so no token sits in a cookie jar and the
//     session is worth what its token is.
//   - Every route that returns run data needs a token on every listener, loopback included:
//     another user of the machine can reach 127.0.0.1 too. Open routes (health, /metrics,
//     the UI's static files and login form) need none on loopback and the read token
//     elsewhere. --open-reads (OpenReads) lets tokenless requests read on loopback, for a
//     one-person machine, and says so at start.
//   - A request that is not GET or HEAD needs the act token whatever its route says. A
//     mutation made with the act session (a form post from the UI) must also come from the
//     same origin (Origin, else Referer, and Sec-Fetch-Site when sent) and carry the CSRF
//     value HMAC(token, "csrf"|session) the page embedded; a bearer request cannot be forged
//     cross-site, as a browser never adds that header on its own.
//   - A token that is sent and wrong is refused (401) even where none is needed, so a
//     misconfigured client learns it at once.
//   - On loopback the Host header must name a loopback host, so a DNS-rebinding page cannot
//     use the victim's browser against the open routes.
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
	Authed bool   // the request carries a token or a session, read or act
	Act    bool   // ... the act token or its session: the UI offers its actions
	CSRF   string // the value a form must echo in CSRFField; "" unless an act session
}

type authKey struct{}

// AuthOf returns the guard's verdict and whether a guard gave one. A request that passed no
// guard came over the unix socket, whose peer check is the check: it may act and needs no
// CSRF value.
func AuthOf(r *http.Request) (Auth, bool) {
	a, ok := r.Context().Value(authKey{}).(Auth)
	if !ok {
		return Auth{Authed: true, Act: true}, false
	}
	return a, true
}

// guardConfig is what the guard checks against.
type guardConfig struct {
	act, read string // the tokens; read "" for none (the act token reads too)
	loopback  bool   // the listener is bound to loopback only
	openReads bool   // tokenless requests may read (loopback only)
}

// Session cookie labels: a session's value is HMAC(token, label).
const (
	actSessionLabel  = "session"
	readSessionLabel = "read-session"
)

// guard enforces the model above in front of next.
type guard struct {
	next        Routed
	ui          UI // nil: no UI, so no login page either
	cfg         guardConfig
	actSession  string // the cookie value an act session holds
	readSession string // ... a read session; "" without a read token
}

func newGuard(cfg guardConfig, ui UI, next http.Handler) *guard {
	g := &guard{next: asRouted(next), ui: ui, cfg: cfg, actSession: hmacHex(cfg.act, actSessionLabel)}
	if cfg.read != "" {
		g.readSession = hmacHex(cfg.read, readSessionLabel)
	}
	return g
}

// hmacHex is hex HMAC-SHA256 of msg under key.
func hmacHex(key, msg string) string {
	h := hmac.New(sha256.New, []byte(key))
	h.Write([]byte(msg))
	return hex.EncodeToString(h.Sum(nil))
}

func secretEqual(a, b string) bool { return subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1 }

// credential is what a request presents.
type credential struct {
	has     Access // AccessOpen: nothing; AccessRead or AccessAct: that token or its session
	session bool   // by session cookie rather than bearer
	wrong   bool   // a bearer token that is neither
}

func (g *guard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if g.cfg.loopback && !loopbackHost(r.Host) {
		writeError(w, errorf(http.StatusMisdirectedRequest, api.CodeBadRequest,
			"host "+r.Host+" is not a loopback name; this server answers only on loopback"))
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxBody)
	if r.URL.Path == LoginPath && g.ui != nil {
		g.login(w, r)
		return
	}
	c := g.credential(r)
	if c.wrong {
		g.deny(w, r, "the token sent is not this server's")
		return
	}
	need := g.next.Need(r)
	if !safeMethod(r.Method) {
		need = AccessAct
	}
	if need == AccessOpen && !g.cfg.loopback {
		need = AccessRead // off loopback every request needs a token
	}
	has := c.has
	if has == AccessOpen && g.cfg.openReads && g.cfg.loopback {
		has = AccessRead
	}
	switch {
	case has >= need:
	case c.has == AccessOpen:
		g.deny(w, r, "")
		return
	default:
		writeError(w, errorf(http.StatusForbidden, api.CodeForbidden,
			"this request needs the act token; the token sent only reads"))
		return
	}
	if c.session && !safeMethod(r.Method) {
		if why := g.checkCSRF(r); why != "" {
			writeError(w, errorf(http.StatusForbidden, api.CodeForbidden, "cross-site request refused: "+why))
			return
		}
	}
	a := Auth{Authed: c.has >= AccessRead, Act: c.has == AccessAct}
	if c.session && a.Act {
		a.CSRF = g.csrf()
	}
	g.next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), authKey{}, a)))
}

// credential reads the bearer token, else the session cookie.
func (g *guard) credential(r *http.Request) credential {
	if h := r.Header.Get("Authorization"); h != "" {
		t, ok := strings.CutPrefix(h, "Bearer ")
		switch {
		case ok && secretEqual(t, g.cfg.act):
			return credential{has: AccessAct}
		case ok && g.cfg.read != "" && secretEqual(t, g.cfg.read):
			return credential{has: AccessRead}
		}
		return credential{has: AccessOpen, wrong: true}
	}
	if ck, err := r.Cookie(sessionCookie); err == nil {
		switch {
		case secretEqual(ck.Value, g.actSession):
			return credential{has: AccessAct, session: true}
		case g.readSession != "" && secretEqual(ck.Value, g.readSession):
			return credential{has: AccessRead, session: true}
		}
	}
	return credential{has: AccessOpen}
}

// csrf is the value an act session's forms carry: derived from the session, so it changes
// with the token and a value leaked from one server is useless on another.
func (g *guard) csrf() string { return hmacHex(g.cfg.act, "csrf|"+g.actSession) }

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

// deny answers 401: a JSON error for the API and /metrics, the login page for the UI. why
// says what was wrong with what was sent ("" when nothing was).
func (g *guard) deny(w http.ResponseWriter, r *http.Request, why string) {
	w.Header().Set("WWW-Authenticate", `Bearer realm="wend"`)
	if g.ui != nil && (strings.HasPrefix(r.URL.Path, "/ui/") || r.URL.Path == "/") {
		g.ui.LoginPage(w, http.StatusUnauthorized, why)
		return
	}
	msg := "this request needs a token: send Authorization: Bearer TOKEN (the read token reads, the act token also acts)"
	if why != "" {
		msg = why + "; " + msg
	}
	writeError(w, errorf(http.StatusUnauthorized, api.CodeUnauthorized, msg))
}

// login trades a token for its session cookie: GET /ui/login?token=T (the link wend serve
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
			writeError(w, errorf(http.StatusForbidden, api.CodeForbidden, "cross-site login refused"))
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, MaxFormBody)
		if err := r.ParseForm(); err != nil {
			g.ui.LoginPage(w, http.StatusBadRequest, "unreadable form")
			return
		}
		tok = r.PostForm.Get("token")
	default:
		writeError(w, errorf(http.StatusMethodNotAllowed, api.CodeBadRequest, "login takes GET or POST"))
		return
	}
	var session string
	switch {
	case secretEqual(tok, g.cfg.act):
		session = g.actSession
	case g.cfg.read != "" && secretEqual(tok, g.cfg.read):
		session = g.readSession
	default:
		g.ui.LoginPage(w, http.StatusUnauthorized, "wrong token")
		return
	}
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: session, Path: "/", HttpOnly: true,
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
