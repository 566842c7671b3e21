package proctest

import (
	"os"
	"path/filepath"
	"testing"
)

// TestReadInvocationsTorn: a record cut by a kill is left out and counted, and the whole
// record another process appended after it, on the same line, is still read.
func TestReadInvocationsTorn(t *testing.T) {
	const a = `{"activity_execution_id":"x1","attempt":1,"note":"a","pid":7}`
	const b = `{"activity_execution_id":"x2","attempt":2,"note":"b","pid":8}`
	const py = `{"activity_execution_id": "x3", "attempt": 1, "note": "c", "pid": 9}`
	for _, tc := range []struct {
		name  string
		log   string
		notes map[string]string // note -> execution id
		torn  int
	}{
		{"whole records", a + "\n" + b + "\n", map[string]string{"a": "x1", "b": "x2"}, 0},
		{"torn, then whole on its line", a[:30] + b + "\n", map[string]string{"b": "x2"}, 1},
		{"two torn, then whole", a[:30] + b[:12] + a + "\n" + b + "\n", map[string]string{"a": "x1", "b": "x2"}, 1},
		{"torn last", a + "\n" + b[:40], map[string]string{"a": "x1"}, 1},
		{"torn before Python's spacing", a[:20] + py + "\n", map[string]string{"c": "x3"}, 1},
		{"garbage", "not json\n\n" + a + "\n", map[string]string{"a": "x1"}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "log.jsonl")
			if err := os.WriteFile(p, []byte(tc.log), 0o644); err != nil {
				t.Fatal(err)
			}
			m, torn, err := ReadInvocations(p)
			if err != nil {
				t.Fatal(err)
			}
			if torn != tc.torn {
				t.Errorf("torn = %d, want %d", torn, tc.torn)
			}
			if len(m) != len(tc.notes) {
				t.Errorf("read %v, want notes %v", m, tc.notes)
			}
			for note, id := range tc.notes {
				if got := m[note]; len(got) != 1 || got[0].ExecID != id {
					t.Errorf("note %q: read %v, want one try under %s", note, got, id)
				}
			}
		})
	}
}
