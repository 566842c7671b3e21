package server

import (
	"net/http"

	"github.com/wendflow/wend/api"
)

// PluginRoller rolls the running plugins named plugin (all when empty) to the program now on
// disk; the process that runs the plugins provides it (plugins.Router.Roll).
type PluginRoller func(plugin string) []api.PluginRoll

// SetPluginRoller sets what RollPlugins calls. Without it RollPlugins is unsupported: no
// plugin runs in a server without an engine driving runs.
func (s *Server) SetPluginRoller(f PluginRoller) { s.roller.Store(&f) }

// RollPlugins starts a new process of each running plugin named plugin (every plugin when
// empty) from its program as it is on disk now; each old process finishes its tries in
// flight, then stops.
func (s *Server) RollPlugins(plugin string) (api.Rolled, error) {
	f := s.roller.Load()
	if f == nil {
		return api.Rolled{}, unsupported("roll plugins")
	}
	out := (*f)(plugin)
	if out == nil {
		out = []api.PluginRoll{}
	}
	return api.Rolled{Rolled: out}, nil
}

func (s *Server) addPluginRoutes(m *Router) {
	m.HandleFunc("POST /v1/plugins/roll", AccessAct, func(w http.ResponseWriter, r *http.Request) {
		var req api.RollRequest
		if !readJSON(w, r, &req) {
			return
		}
		out, err := s.RollPlugins(req.Plugin)
		if err != nil {
			writeError(w, err)
			return
		}
		writeJSON(w, http.StatusOK, out)
	})
}
