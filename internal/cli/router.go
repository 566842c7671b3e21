package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sync"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/plugins"
)

// router is the engine's Activities for the CLI: one plugin host per distinct declaration
// (workflows may give the same plugin name to different programs), started on first use.
type router struct {
	log      io.Writer
	registry string // plugins.Options.Registry of every host
	mu       sync.Mutex
	hosts    map[string]*plugins.Host
}

func newRouter(log io.Writer, registry string) *router {
	return &router{log: log, registry: registry, hosts: map[string]*plugins.Host{}}
}

func (r *router) Execute(ctx context.Context, call history.ActivityCall, hb func(history.Heartbeat)) (json.RawMessage, error) {
	h, err := r.host(call.Plugin, call.Declared)
	if err != nil {
		return nil, err
	}
	return h.Execute(ctx, call, hb)
}

func (r *router) host(name string, ref history.PluginRef) (*plugins.Host, error) {
	if len(ref.Command) == 0 {
		return nil, &history.ActivityError{Category: history.CategoryInternal, Type: "PluginNotDeclared", NonRetryable: true,
			Message: fmt.Sprintf("plugin %q is not declared by the run's workflow", name)}
	}
	key, _ := json.Marshal(struct {
		Name string
		Ref  history.PluginRef
	}{name, ref})
	r.mu.Lock()
	defer r.mu.Unlock()
	if h, ok := r.hosts[string(key)]; ok {
		return h, nil
	}
	h, err := plugins.New([]plugins.Config{{Name: name, Command: ref.Command, Dir: ref.Dir, SHA256: ref.SHA256, Env: ref.Env}},
		plugins.Options{Log: func(plugin, line string) { fmt.Fprintf(r.log, "plugin %s: %s\n", plugin, line) }, Registry: r.registry})
	if err != nil {
		return nil, &history.ActivityError{Category: history.CategoryInternal, Type: "PluginConfig", NonRetryable: true, Message: err.Error()}
	}
	r.hosts[string(key)] = h
	return h, nil
}

// Close stops every plugin process.
func (r *router) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	var first error
	for k, h := range r.hosts {
		if err := h.Close(); err != nil && first == nil {
			first = err
		}
		delete(r.hosts, k)
	}
	return first
}
