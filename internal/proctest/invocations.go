package proctest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// Invocation is one line of the example plugin's invocation log (its record activity): one
// try that reached the plugin.
type Invocation struct {
	ExecID  string `json:"activity_execution_id"`
	Attempt int    `json:"attempt"`
	Note    string `json:"note"`
}

// ReadInvocations reads the log at path by note. A line torn by a kill mid-write is not a
// try the step saw complete, and is left out.
func ReadInvocations(path string) (map[string][]Invocation, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[string][]Invocation{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var r Invocation
		if json.Unmarshal(sc.Bytes(), &r) != nil {
			continue
		}
		out[r.Note] = append(out[r.Note], r)
	}
	return out, sc.Err()
}

// CountInvocations is the number of tries in a log read by ReadInvocations.
func CountInvocations(m map[string][]Invocation) int {
	n := 0
	for _, v := range m {
		n += len(v)
	}
	return n
}

// Running counts processes running the program at path, waiting up to grace for them to go:
// a killed host's plugins exit by parent-death signal or are reaped by its successor.
func Running(path string, grace time.Duration) int {
	deadline := time.Now().Add(grace)
	for {
		n := 0
		entries, _ := os.ReadDir("/proc")
		for _, e := range entries {
			if _, err := strconv.Atoi(e.Name()); err != nil {
				continue
			}
			cmd, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
			if err == nil && bytes.HasPrefix(cmd, []byte(path+"\x00")) {
				n++
			}
		}
		if n == 0 || time.Now().After(deadline) {
			return n
		}
		time.Sleep(100 * time.Millisecond)
	}
}
