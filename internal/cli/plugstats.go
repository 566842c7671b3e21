package cli

import "github.com/wendflow/wend/server"

// stats sums the process counts of every plugin host, for /metrics.
func (r *router) stats() server.PluginStats {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out server.PluginStats
	for _, h := range r.hosts {
		st := h.Stats()
		out.Processes += st.Processes
		out.Starts += st.Starts
		out.Restarts += st.Restarts
	}
	return out
}
