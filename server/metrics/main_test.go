package metrics

import (
	"fmt"
	"os"
	"testing"
)

// helperEnv makes the test binary act as a helper process instead of running tests; helperDB
// is the database it works on.
const (
	helperEnv = "WEND_METRICS_HELPER"
	helperDB  = "WEND_METRICS_DB"
)

func TestMain(m *testing.M) {
	if role := os.Getenv(helperEnv); role != "" {
		var err error
		switch role {
		case "killed":
			err = killedServe(os.Getenv(helperDB)) // counters_kill_test.go
		default:
			err = fmt.Errorf("unknown helper %q", role)
		}
		fmt.Fprintln(os.Stderr, "helper:", err)
		os.Exit(1)
	}
	os.Exit(m.Run())
}
