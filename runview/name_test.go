package runview

import "testing"

// TestStepName: progress lines, `wend show` and the web UI named steps by position
// (steps[3].parallel[1].steps[1], steps[1]@0.steps[0]); a person wants the id, or a place.
func TestStepName(t *testing.T) {
	ids := map[string]string{
		"steps[0]":                           "charge",
		"steps[1]":                           "pack",
		"steps[1].steps[1]":                  "label",
		"steps[3]":                           "ship",
		"steps[3].parallel[0]":               "notify",
		"steps[4].steps[0]":                  "inner",
		"steps[4].steps[0].steps[0]":         "pick",
		"steps[0].catch[0].compensate_with":  "refund",
		"steps[5].parallel[1].steps[1].x[0]": "",
	}
	cases := []struct{ path, want string }{
		{"", ""},
		{"steps[0]", "charge"},
		{"steps[2]", "step 3"},
		{"steps[3].parallel[1].steps[1]", "ship › branch 2 › step 2"},
		{"steps[3].parallel[0]", "notify"},
		{"steps[3].parallel[0].steps[2]", "notify › step 3"},
		{"steps[1]@0.steps[0]", "pack[0] › step 1"},
		{"steps[1]@12.steps[1]", "pack[12] › label"},
		{"steps[4]@1.steps[0]@2.steps[0]", "step 5[1] › inner[2] › pick"},
		{"steps[0].compensate_with", "charge › compensate_with"},
		{"steps[0].catch[1]", "charge › catch 2"},
		{"steps[0].catch[0].compensate_with", "refund"},
		{"on_cancel[0]", "on_cancel 1"},
		{"on_cancel", "on_cancel"},
		{"steps[x]", "steps[x]"},
		{"steps[-1]", "steps[-1]"},
		{"steps[99999999999999999999]", "steps[99999999999999999999]"},
		{"steps[", "steps["},
		{"a..b@", "a ›  › b[]"},
	}
	for _, c := range cases {
		if got := StepName(c.path, ids); got != c.want {
			t.Errorf("StepName(%q) = %q, want %q", c.path, got, c.want)
		}
	}
	// Without the spec: places only.
	if got := StepName("steps[3].parallel[1].steps[1]", nil); got != "step 4 › branch 2 › step 2" {
		t.Errorf("without ids: %q", got)
	}
}

func FuzzStepName(f *testing.F) {
	f.Add("steps[1]@0.steps[0]")
	f.Add("steps[3].parallel[1].steps[1]")
	f.Fuzz(func(t *testing.T, path string) {
		_ = StepName(path, map[string]string{"steps[0]": "a"}) // must not panic
	})
}

// TestTimerName: show's timeline and pending timers and the run page named timers by
// their ids, positional paths (steps[0]#timeout, steps[1]@0.steps[0]); they read as steps do.
func TestTimerName(t *testing.T) {
	ids := map[string]string{"steps[0]": "approve", "steps[1]": "pack"}
	name := func(path string) string { return StepName(path, ids) }
	for id, want := range map[string]string{
		"steps[0]#timeout":     "approve#timeout",
		"steps[1]@0.steps[0]":  "pack[0] › step 1",
		"steps[2]":             "step 3",
		"workflow#run_timeout": "workflow#run_timeout",
		"":                     "",
	} {
		if got := TimerName(id, name); got != want {
			t.Errorf("TimerName(%q) = %q, want %q", id, got, want)
		}
	}
}
