package proctest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// Invocation is one line of the example plugin's invocation log (its record activity): one
// try that reached the plugin.
type Invocation struct {
	ExecID  string `json:"activity_execution_id"`
	Attempt int    `json:"attempt"`
	Note    string `json:"note"`
}

// ReadInvocations reads the log at path by note, and counts the torn records in it. A record
// torn by a kill mid-write (a short write cut at a page boundary) is not a try the step saw
// complete, and is left out. It ends without a newline, so the next try's record, written
// whole by another process, follows it on the same line: that record is read from after the
// torn one.
func ReadInvocations(path string) (m map[string][]Invocation, torn int, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	m = map[string][]Invocation{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Bytes()
		if len(line) == 0 {
			continue
		}
		var r Invocation
		if json.Unmarshal(line, &r) == nil {
			m[r.Note] = append(m[r.Note], r)
			continue
		}
		torn++
		// Every record starts with its first field; a whole one after a torn one starts at
		// the last such start on the line (a torn record cannot follow a whole one, which
		// ends with its newline).
		if i := bytes.LastIndex(line, recordStart); i > 0 && json.Unmarshal(line[i:], &r) == nil {
			m[r.Note] = append(m[r.Note], r)
		}
	}
	return m, torn, sc.Err()
}

// recordStart is how the example plugins' records begin: the activity_execution_id field
// first (examples/plugins/*; Python's JSON puts a space after the colon, so it stops before).
var recordStart = []byte(`{"activity_execution_id"`)

// LoadInvocations is ReadInvocations for a test: it fails t on an error and logs the torn
// records it left out.
func LoadInvocations(t testing.TB, path string) map[string][]Invocation {
	t.Helper()
	m, torn, err := ReadInvocations(path)
	if err != nil {
		t.Fatal(err)
	}
	if torn > 0 {
		t.Logf("%s: %d records torn by a kill mid-write, left out", filepath.Base(path), torn)
	}
	return m
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
