package history

import (
	"crypto/sha256"
	"encoding/hex"
)

// Migration is WorkflowMigrated's payload: the run left the spec text whose sha256 is From
// for SpecSource (sha256 To). The run keeps the spec file path it started with (run_workflow
// paths and plugin folders resolve against it); File is where the new text was read, for people.
type Migration struct {
	FromSHA256 string `json:"from_sha256"`
	ToSHA256   string `json:"to_sha256"`
	SpecSource string `json:"spec_source"`
	File       string `json:"file,omitempty"`
	// By is who asked: the local user's name, or the API token's.
	By string `json:"by,omitempty"`
}

// SpecSHA256 is the hex sha256 of a spec text, as Started and Migration record it.
func SpecSHA256(source []byte) string {
	sum := sha256.Sum256(source)
	return hex.EncodeToString(sum[:])
}

// CurrentSpec returns st, a run's WorkflowStarted payload, with the spec text and hash the
// run runs now: those of its last WorkflowMigrated, else st's own. Everything that rebuilds
// or reads a run by its spec goes through it, so a moved run is read with its new text.
func CurrentSpec(st Started, events []Event) (Started, error) {
	for i := len(events) - 1; i > 0; i-- {
		if events[i].Type != WorkflowMigrated {
			continue
		}
		m, err := DataOf[Migration](events[i])
		if err != nil {
			return st, err
		}
		st.SpecSource, st.SpecSHA256 = m.SpecSource, m.ToSHA256
		return st, nil
	}
	return st, nil
}

// checkMigrations verifies that each WorkflowMigrated leaves the text the run was on and
// carries the text its hash names.
func checkMigrations(events []Event, add func(seq uint64, format string, args ...any)) {
	if len(events) == 0 || events[0].Type != WorkflowStarted {
		return
	}
	st, err := DataOf[Started](events[0])
	if err != nil {
		return
	}
	on := st.SpecSHA256
	for _, e := range events[1:] {
		if e.Type != WorkflowMigrated {
			continue
		}
		m, err := DataOf[Migration](e)
		if err != nil {
			add(e.Seq, "%v", err)
			continue
		}
		if m.FromSHA256 != on {
			add(e.Seq, "WorkflowMigrated from spec %s, but the run was on %s", short(m.FromSHA256), short(on))
		}
		if got := SpecSHA256([]byte(m.SpecSource)); got != m.ToSHA256 {
			add(e.Seq, "WorkflowMigrated to spec %s carries a text whose sha256 is %s", short(m.ToSHA256), short(got))
		}
		on = m.ToSHA256
	}
}

// short is the first 12 hex digits of a hash, as people read it.
func short(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}
