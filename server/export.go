package server

import (
	"fmt"
	"net/http"

	"github.com/wendflow/wend/history/export"
)

// Export returns the history export (wend.history-export/v1) of the newest run of workflow
// id id (or run id id), built from the same record and events Show reads. A history the
// export cannot read is CodeInternal: the store holds something this build cannot parse.
func (s *Server) Export(id string) (*export.Document, error) {
	p, err := s.Events(id, 0)
	if err != nil {
		return nil, err
	}
	doc, err := export.Build(p.Run, p.Events)
	if err != nil {
		return nil, wrap(fmt.Errorf("export run %s: %w", p.Run.RunID, err))
	}
	return doc, nil
}

func (s *Server) exportRun(w http.ResponseWriter, r *http.Request) {
	doc, err := s.Export(r.PathValue("id"))
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, doc)
}
