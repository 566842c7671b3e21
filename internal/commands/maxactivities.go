package commands

import (
	"flag"
	"fmt"

	"github.com/wendflow/wend/interpreter/engine"
)

// maxActivitiesLimit bounds --max-activities: each slot may hold a goroutine and a plugin
// call, so a typo of extra digits must not pass for a setting.
const maxActivitiesLimit = 1 << 20

// maxActivitiesFlag is --max-activities of wend serve and wend run.
func maxActivitiesFlag(fs *flag.FlagSet) *int {
	return fs.Int("max-activities", engine.DefaultMaxActivities, "")
}

// checkMaxActivities says what is wrong with an --max-activities value, or "".
func checkMaxActivities(n int) string {
	if n < 1 || n > maxActivitiesLimit {
		return fmt.Sprintf("--max-activities %d: give a number from 1 to %d", n, maxActivitiesLimit)
	}
	return ""
}
