package servertest

import (
	"testing"
	"time"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/schedule/runner"
	"github.com/wendflow/wend/spec"
)

// ScheduledSpec is workflow "report" with one schedule: nightly at 3:00, New York time.
const ScheduledSpec = `wend: v1
name: report
schedules:
  - {id: nightly, cron: "0 3 * * *", timezone: America/New_York}
steps:
  - {id: s, steps: []}
`

// NightlyRunner is a schedule runner over ScheduledSpec's one schedule, with runs in runs and
// started by eng, and its clock stopped at now.
func NightlyRunner(t testing.TB, runs history.Store, eng runner.Engine, now time.Time) *runner.Runner {
	t.Helper()
	w, ds := spec.Load("report.wend.yaml", []byte(ScheduledSpec))
	if ds.HasErrors() {
		t.Fatal(ds.Error())
	}
	rn, err := runner.New(runner.Options{Store: &runner.MemStore{}, Runs: runs, Engine: eng, Now: func() time.Time { return now },
		Entries: []runner.Entry{{Workflow: "report", File: "report.wend.yaml", Source: []byte(ScheduledSpec), Schedule: w.Schedules[0]}}})
	if err != nil {
		t.Fatal(err)
	}
	return rn
}
