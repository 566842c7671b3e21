package server

import (
	"fmt"
	"net/http"
)

// Access is what a route needs from a caller on the TCP listener (auth.go). The unix socket
// checks no token: its peer is the serving user (unix.go). The zero value is no rule at all,
// which Router refuses, so no route exists without one.
type Access int

const (
	// AccessOpen needs no token on a loopback listener and the read token elsewhere: the
	// health route, /metrics, the UI's stylesheet and script, the login form, redirects.
	// Nothing open returns run data.
	AccessOpen Access = iota + 1
	// AccessRead needs the read token or the act token: everything that returns run data.
	AccessRead
	// AccessAct needs the act token: everything that changes something, and the backup.
	AccessAct
)

func (a Access) String() string {
	switch a {
	case AccessOpen:
		return "open"
	case AccessRead:
		return "read"
	case AccessAct:
		return "act"
	}
	return fmt.Sprintf("Access(%d)", int(a))
}

// Route is a registered pattern (http.ServeMux's syntax) and the access it needs.
type Route struct {
	Pattern string
	Access  Access
}

// Routed is a handler that lists its routes and says what a request to it needs. The guard
// asks it before the request reaches any route.
type Routed interface {
	http.Handler
	Routes() []Route
	Need(r *http.Request) Access
}

// Router is an http.ServeMux whose every route carries its Access: registering one without
// a rule panics at start, and the guard reads the rule of the route a request would reach.
type Router struct {
	mux    *http.ServeMux
	access map[string]Access // by pattern
	routes []Route
	inner  Routed // serves the requests no route here matches
}

// NewRouter makes an empty Router.
func NewRouter() *Router { return &Router{mux: http.NewServeMux(), access: map[string]Access{}} }

// Handle registers h at pattern, needing a.
func (rt *Router) Handle(pattern string, a Access, h http.Handler) {
	if a < AccessOpen || a > AccessAct {
		panic(fmt.Sprintf("route %q has no access rule", pattern))
	}
	if _, dup := rt.access[pattern]; dup {
		panic(fmt.Sprintf("route %q registered twice", pattern))
	}
	rt.mux.Handle(pattern, h)
	rt.access[pattern] = a
	rt.routes = append(rt.routes, Route{Pattern: pattern, Access: a})
}

// HandleFunc is Handle for a function.
func (rt *Router) HandleFunc(pattern string, a Access, h http.HandlerFunc) { rt.Handle(pattern, a, h) }

// Inner hands every request no route here matches to h, whose own rules then apply.
func (rt *Router) Inner(h Routed) {
	rt.mux.Handle("/", h)
	rt.inner = h
}

// ServeHTTP serves the request by the route it matches.
func (rt *Router) ServeHTTP(w http.ResponseWriter, r *http.Request) { rt.mux.ServeHTTP(w, r) }

// Routes lists the routes here, then those of the inner handler.
func (rt *Router) Routes() []Route {
	out := append([]Route(nil), rt.routes...)
	if rt.inner != nil {
		out = append(out, rt.inner.Routes()...)
	}
	return out
}

// Need is the access the route r would reach needs. A request that reaches no route (a 404,
// a 405, a redirect to the canonical path) needs the read token: whether a route exists is
// not for everyone to probe, and a redirect never reaches an open route's data.
func (rt *Router) Need(r *http.Request) Access {
	_, pattern := rt.mux.Handler(r)
	if a, ok := rt.access[pattern]; ok {
		return a
	}
	if pattern == "/" && rt.inner != nil {
		return rt.inner.Need(r)
	}
	return AccessRead
}

// needByMethod is the rule for a handler that declares none: reads need the read token,
// anything else the act token.
func needByMethod(r *http.Request) Access {
	if safeMethod(r.Method) {
		return AccessRead
	}
	return AccessAct
}

// safeMethod says whether a method only reads (HTTP's safe methods wend answers).
func safeMethod(m string) bool { return m == http.MethodGet || m == http.MethodHead }

// routedFloor gives a handler without rules the rule by method.
type routedFloor struct{ http.Handler }

func (routedFloor) Routes() []Route             { return nil }
func (routedFloor) Need(r *http.Request) Access { return needByMethod(r) }

// asRouted is h with its own rules, or with the rule by method when it declares none.
func asRouted(h http.Handler) Routed {
	if rh, ok := h.(Routed); ok {
		return rh
	}
	return routedFloor{h}
}
