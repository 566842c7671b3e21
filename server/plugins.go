package server

import "net/http"

// PluginRoll is what rolling one running plugin did: POST /v1/plugins/roll.
type PluginRoll struct {
	Plugin    string `json:"plugin"`
	OldPID    int    `json:"old_pid"`
	OldSHA256 string `json:"old_sha256,omitempty"`
	NewPID    int    `json:"new_pid,omitempty"`    // absent when the new build did not start
	NewSHA256 string `json:"new_sha256,omitempty"` // the build the plugin's next tries run
	// Error says why the new build did not start; the old process goes on serving.
	Error string `json:"error,omitempty"`
}

// RollRequest names the plugin to roll; empty: every plugin.
type RollRequest struct {
	Plugin string `json:"plugin,omitempty"`
}

// Rolled is RollPlugins' answer: one entry per running plugin process it replaced (none when
// no process of the plugin runs: its next try starts the program as it is then).
type Rolled struct {
	Rolled []PluginRoll `json:"rolled"`
}

// PluginRoller rolls the running plugins named plugin (all when empty) to the program now on
// disk; the process that runs the plugins provides it (plugins.Router.Roll).
type PluginRoller func(plugin string) []PluginRoll

// SetPluginRoller sets what RollPlugins calls. Without it RollPlugins is unsupported: no
// plugin runs in a server without an engine driving runs.
func (s *Server) SetPluginRoller(f PluginRoller) { s.roller.Store(&f) }

// RollPlugins starts a new process of each running plugin named plugin (every plugin when
// empty) from its program as it is on disk now; each old process finishes its tries in
// flight, then stops.
func (s *Server) RollPlugins(plugin string) (Rolled, error) {
	f := s.roller.Load()
	if f == nil {
		return Rolled{}, unsupported("roll plugins")
	}
	out := (*f)(plugin)
	if out == nil {
		out = []PluginRoll{}
	}
	return Rolled{Rolled: out}, nil
}

func (s *Server) addPluginRoutes(m *Router) {
	m.HandleFunc("POST /v1/plugins/roll", AccessAct, func(w http.ResponseWriter, r *http.Request) {
		var req RollRequest
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
