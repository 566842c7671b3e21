package web

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"slices"
	"strconv"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/spec/graph"
)

// A page polling a run's live part says what it shows: its version as If-None-Match (the
// run's record moves with every commit), and its drawing's key in graphKeyHeader. An
// unchanged run answers 304 from its record alone, with no read of its events; a changed run
// whose steps are drawn as before answers the live part without the drawing, which the page
// keeps.
const graphKeyHeader = "X-Wend-Graph"

// runVersion is the version of a run's page: its last event and status.
func runVersion(run history.Run) string { return fmt.Sprintf("%d-%s", run.LastSeq, run.Status) }

// etagOf is a version as an ETag.
func etagOf(version string) string { return strconv.Quote(version) }

// liveUnchanged answers 304 to a poll of the live part of a run that has not changed since
// the page's version, and reports whether it did.
func (u *UI) liveUnchanged(w http.ResponseWriter, r *http.Request) bool {
	have := r.Header.Get("If-None-Match")
	if have == "" {
		return false
	}
	run, err := u.s.Resolve(r.PathValue("id"))
	if err != nil || have != etagOf(runVersion(run)) {
		return false // an error is the full answer's to give
	}
	w.Header().Set("ETag", have)
	w.WriteHeader(http.StatusNotModified)
	return true
}

// graphKey identifies a drawing by its marks: the same spec with the same marks is the same
// drawing.
func graphKey(marks map[string]graph.Mark) string {
	paths := make([]string, 0, len(marks))
	for p := range marks {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	h := sha256.New()
	for _, p := range paths {
		m := marks[p]
		// Lengths first, so no two mark sets write the same bytes.
		fmt.Fprintf(h, "%d:%s%d:%s%d:%s%d:%s%t\n", len(p), p, len(m.State), m.State, len(m.Text), m.Text, len(m.Href), m.Href, m.Current)
	}
	return hex.EncodeToString(h.Sum(nil)[:12])
}
