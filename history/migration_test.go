package history

import (
	"strings"
	"testing"
	"time"
)

// TestCheckMigrations: a WorkflowMigrated must leave the text the run was on and carry the
// text its hash names; CurrentSpec reads the last one.
func TestCheckMigrations(t *testing.T) {
	a, b, c := "wend: v1\nname: t\n# a\n", "wend: v1\nname: t\n# b\n", "wend: v1\nname: t\n# c\n"
	ha, hb, hc := SpecSHA256([]byte(a)), SpecSHA256([]byte(b)), SpecSHA256([]byte(c))
	now := time.Unix(0, 0).UTC()
	run := func(ms ...Migration) (Run, []Event) {
		evs := []Event{{Seq: 1, Type: WorkflowStarted, Time: now, Data: MustData(Started{RunID: "r", SpecSource: a, SpecSHA256: ha})}}
		for _, m := range ms {
			evs = append(evs, Event{Seq: uint64(len(evs) + 1), Type: WorkflowMigrated, Time: now, Data: MustData(m)})
		}
		return Run{RunID: "r", Status: StatusRunning, LastSeq: uint64(len(evs))}, evs
	}
	cases := []struct {
		name string
		ms   []Migration
		want string // a problem's text, "" for none
		on   string // CurrentSpec's hash
	}{
		{"none", nil, "", ha},
		{"one", []Migration{{FromSHA256: ha, ToSHA256: hb, SpecSource: b}}, "", hb},
		{"two", []Migration{{FromSHA256: ha, ToSHA256: hb, SpecSource: b}, {FromSHA256: hb, ToSHA256: hc, SpecSource: c}}, "", hc},
		{"from another text", []Migration{{FromSHA256: hb, ToSHA256: hc, SpecSource: c}}, "but the run was on " + ha[:12], hc},
		{"text not its hash", []Migration{{FromSHA256: ha, ToSHA256: hb, SpecSource: c}}, "whose sha256 is " + hc[:12], hb},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r, evs := run(tc.ms...)
			ps := Check(r, evs)
			switch {
			case tc.want == "" && len(ps) > 0:
				t.Fatalf("problems %v", ps)
			case tc.want != "" && (len(ps) != 1 || !strings.Contains(ps[0].What, tc.want)):
				t.Fatalf("problems %v, want one with %q", ps, tc.want)
			}
			st, _ := DataOf[Started](evs[0])
			cur, err := CurrentSpec(st, evs)
			if err != nil || cur.SpecSHA256 != tc.on {
				t.Fatalf("CurrentSpec on %s (%v), want %s", cur.SpecSHA256, err, tc.on)
			}
		})
	}
}
