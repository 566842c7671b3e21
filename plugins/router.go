package plugins

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/wendflow/wend/history"
)

// Router runs activity calls on one Host per distinct plugin declaration, started on first
// use: workflows may give the same plugin name to different programs, and a worker serving
// many workflows sees all of them. It is the engine's Activities for `wend run` and `wend
// serve`, and what a Temporal worker's activities call.
type Router struct {
	opts  Options // of every host
	mu    sync.Mutex
	hosts map[string]*Host
	last  *route // the declaration the last call named: a run's tries name the same one
}

// route is a declaration and its host.
type route struct {
	name string
	ref  history.PluginRef
	h    *Host
}

// names reports whether the call of plugin name declared as ref goes to rt's host: the same
// fields routeKey encodes, compared without building the key.
func (rt *route) names(name string, ref history.PluginRef) bool {
	return rt.name == name && rt.ref.Dir == ref.Dir && rt.ref.SHA256 == ref.SHA256 &&
		rt.ref.StartTimeoutMS == ref.StartTimeoutMS && slices.Equal(rt.ref.Command, ref.Command) &&
		slices.Equal(rt.ref.Env, ref.Env)
}

// NewRouter makes a Router whose hosts share opts (the log, the registry of processes).
func NewRouter(opts Options) *Router {
	return &Router{opts: opts, hosts: map[string]*Host{}}
}

// Execute runs one try of call on the host of call.Declared.
func (r *Router) Execute(ctx context.Context, call history.ActivityCall, hb func(history.Heartbeat)) (json.RawMessage, error) {
	return r.ExecuteBuild(ctx, call, hb, nil)
}

// ExecuteBuild is Execute that names the plugin build serving the try (Host.ExecuteBuild).
func (r *Router) ExecuteBuild(ctx context.Context, call history.ActivityCall, hb func(history.Heartbeat), served func(sha256 string)) (json.RawMessage, error) {
	h, err := r.host(call.Plugin, call.Declared)
	if err != nil {
		return nil, err
	}
	return h.ExecuteBuild(ctx, call, hb, served)
}

func (r *Router) host(name string, ref history.PluginRef) (*Host, error) {
	if len(ref.Command) == 0 {
		return nil, &history.ActivityError{Category: history.CategoryInternal, Type: "PluginNotDeclared", NonRetryable: true,
			Message: fmt.Sprintf("plugin %q is not declared by the run's workflow", name)}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if rt := r.last; rt != nil && rt.names(name, ref) {
		return rt.h, nil
	}
	key := routeKey(name, ref)
	if h, ok := r.hosts[key]; ok {
		r.last = &route{name: name, ref: ref, h: h}
		return h, nil
	}
	h, err := New([]Config{{Name: name, Command: ref.Command, Dir: ref.Dir, SHA256: ref.SHA256, Env: ref.Env,
		StartTimeout: time.Duration(ref.StartTimeoutMS) * time.Millisecond}}, r.opts)
	if err != nil {
		return nil, &history.ActivityError{Category: history.CategoryInternal, Type: "PluginConfig", NonRetryable: true, Message: err.Error()}
	}
	r.hosts[key] = h
	r.last = &route{name: name, ref: ref, h: h}
	return h, nil
}

// routeKey names a declaration: every field, each prefixed by its length so that no two
// declarations share a key. It is built when a call names another declaration than the last
// call did (Router.last), by hand rather than by JSON encoding, which cost more
// (docs/performance.md).
func routeKey(name string, ref history.PluginRef) string {
	var b strings.Builder
	field := func(s string) {
		b.WriteString(strconv.Itoa(len(s)))
		b.WriteByte(':')
		b.WriteString(s)
	}
	field(name)
	field(ref.Dir)
	field(ref.SHA256)
	field(strconv.FormatInt(ref.StartTimeoutMS, 10))
	b.WriteString(strconv.Itoa(len(ref.Command)))
	b.WriteByte('/') // the count, so that an argument cannot pass for an Env entry
	for _, c := range ref.Command {
		field(c)
	}
	for _, kv := range ref.Env {
		field(kv)
	}
	return b.String()
}

// Stats sums the process counts of every host, for the operator's metrics.
func (r *Router) Stats() Stats {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out Stats
	for _, h := range r.hosts {
		st := h.Stats()
		out.Processes += st.Processes
		out.Starts += st.Starts
		out.Restarts += st.Restarts
		out.Rolls += st.Rolls
	}
	return out
}

// Close stops every plugin process. The Router may be used again afterwards: a later call
// starts a fresh host.
func (r *Router) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	var first error
	for k, h := range r.hosts {
		if err := h.Close(); err != nil && first == nil {
			first = err
		}
		delete(r.hosts, k)
	}
	r.last = nil
	return first
}
