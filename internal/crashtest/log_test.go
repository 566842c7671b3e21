//go:build unix

package crashtest

import (
	"os"
	"testing"
)

// TestKillAndResumeWithLog is TestKillAndResume with the store's write-ahead log on in every
// process that opens the database (docs/reliability.md A12), whatever the environment says: a
// long sequential run killed again and again loses and duplicates nothing with one synced
// append per commit.
func TestKillAndResumeWithLog(t *testing.T) {
	t.Setenv("WEND_STORE_LOG", "1")
	killAndResume(t)
}

// TestKillAndResumeWithoutLog is TestKillAndResume with the log off (WEND_STORE_LOG=0): bbolt's
// own synced commits, the store's other mode, stay covered in a plain run.
func TestKillAndResumeWithoutLog(t *testing.T) {
	t.Setenv("WEND_STORE_LOG", "0")
	killAndResume(t)
}

// storeKind names, in a RELIABILITY line, the store the suite's processes ran on.
func storeKind() string {
	if os.Getenv("WEND_STORE_LOG") == "0" {
		return "bbolt"
	}
	return "log"
}
