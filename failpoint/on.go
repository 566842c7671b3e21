//go:build faults

package failpoint

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
)

var (
	mu     sync.Mutex
	counts = map[string]int{}
	plan   = parse(os.Getenv("WEND_FAILPOINTS"))
)

func parse(s string) map[string]int {
	out := map[string]int{}
	for _, part := range strings.Split(s, ",") {
		name, n, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok {
			continue
		}
		if v, err := strconv.Atoi(n); err == nil {
			out[name] = v
		}
	}
	return out
}

// Hit counts a pass through the failpoint and exits the process at the planned pass.
func Hit(name string) {
	mu.Lock()
	counts[name]++
	die := plan[name] != 0 && counts[name] == plan[name]
	mu.Unlock()
	if die {
		fmt.Fprintf(os.Stderr, "wend: failpoint %s hit, exiting 137\n", name)
		os.Exit(137)
	}
}
