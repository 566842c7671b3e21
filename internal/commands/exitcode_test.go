package commands

import (
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// One meaning per exit code: the codes are distinct, the README's table
// lists exactly them, an internal error (a panic) exits 70, and no command's help gives a
// code another meaning (3 is "cancelled" wherever it appears, never "internal error").
func TestExitCodesOneMeaning(t *testing.T) {
	codes := map[int]string{exitOK: "done", exitFailed: "failed", exitUsage: "usage", exitRunCancelled: "cancelled",
		exitRunTimedOut: "timed out", exitInternal: "internal", exitInterrupted: "interrupted"}
	if len(codes) != 7 || exitRunFailed != exitFailed {
		t.Fatalf("exit codes collide: %v", codes)
	}

	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, sec, ok := strings.Cut(string(readme), "\n## Exit codes\n")
	if !ok {
		t.Fatal(`README has no "## Exit codes" section`)
	}
	sec, _, _ = strings.Cut(sec, "\n## ")
	table := map[int]string{}
	for _, m := range regexp.MustCompile(`(?m)^\| (\d+) \| (.*) \|$`).FindAllStringSubmatch(sec, -1) {
		n, _ := strconv.Atoi(m[1])
		table[n] = m[2]
	}
	for n, word := range codes {
		if !strings.Contains(table[n], word) {
			t.Errorf("README's exit code %d: %q, want it to say %q", n, table[n], word)
		}
	}
	if len(table) != len(codes) {
		t.Errorf("README lists %d exit codes, the code has %d", len(table), len(codes))
	}

	commands["boom"] = &command{run: func(*env, []string) int { panic("boom") }}
	defer delete(commands, "boom")
	var stderr strings.Builder
	if code := run(&env{stdout: &stderr, stderr: &stderr, getenv: os.Getenv}, []string{"boom"}); code != 70 {
		t.Errorf("a panicking command exits %d, want 70", code)
	}

	num := regexp.MustCompile(`(?:^|[:,] |or )(\d+) ([a-z]+)`)
	for name, c := range commands {
		_, help, ok := strings.Cut(c.usage, "Exit codes:")
		if !ok {
			continue
		}
		help = strings.Join(strings.Fields(help), " ")
		for _, m := range num.FindAllStringSubmatch(help, -1) {
			n, _ := strconv.Atoi(m[1])
			if _, ok := table[n]; !ok {
				t.Errorf("wend %s's help gives exit code %d, which the README's table lacks", name, n)
			}
			if n == 3 && m[2] != "cancelled" || n == exitInternal && m[2] != "internal" {
				t.Errorf("wend %s's help says %q: code %d means %s", name, m[0], n, codes[n])
			}
		}
	}
}
