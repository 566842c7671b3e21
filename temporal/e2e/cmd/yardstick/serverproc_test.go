package main

import (
	"bufio"
	"strings"
	"testing"
	"time"
)

func TestParseReady(t *testing.T) {
	for _, tc := range []struct {
		line, addr, ns string
		ok             bool
	}{
		{"devserver-ready 127.0.0.1:7233 default\n", "127.0.0.1:7233", "default", true},
		{"devserver-ready [::1]:40001 wend", "[::1]:40001", "wend", true},
		{"devserver-ready 127.0.0.1:7233\n", "", "", false},           // no namespace
		{"devserver-ready 127.0.0.1 default\n", "", "", false},        // no port
		{"devserver-ready 127.0.0.1: default\n", "", "", false},       // empty port
		{"ready 127.0.0.1:7233 default\n", "", "", false},             // another word
		{"devserver-ready 127.0.0.1:7233 default x\n", "", "", false}, // a field too many
		{"", "", "", false},
	} {
		addr, ns, ok := parseReady(tc.line)
		if addr != tc.addr || ns != tc.ns || ok != tc.ok {
			t.Errorf("parseReady(%q) = %q, %q, %v; want %q, %q, %v", tc.line, addr, ns, ok, tc.addr, tc.ns, tc.ok)
		}
	}
}

func TestReadReadySkipsOtherLines(t *testing.T) {
	r := bufio.NewReader(strings.NewReader("a stray print\ndevserver-ready 127.0.0.1:1234 default\ncpu 5\n"))
	addr, ns, err := readReady(r)
	if err != nil || addr != "127.0.0.1:1234" || ns != "default" {
		t.Fatalf("readReady = %q, %q, %v", addr, ns, err)
	}
	if rest, _ := r.ReadString('\n'); rest != "cpu 5\n" {
		t.Errorf("after the ready line the reader holds %q, want the next line", rest)
	}
}

func TestReadReadyChildExitedBeforeReady(t *testing.T) {
	_, _, err := readReady(bufio.NewReader(strings.NewReader("devserver: start: port taken\n")))
	if err == nil || !strings.Contains(err.Error(), "exited before it said devserver-ready") {
		t.Fatalf("readReady on a child that exited: %v", err)
	}
}

func TestParseCPU(t *testing.T) {
	for _, tc := range []struct {
		line string
		d    time.Duration
		ok   bool
	}{
		{"cpu 1500000000\n", 1500 * time.Millisecond, true},
		{"cpu 0", 0, true},
		{"cpu -1\n", 0, false},
		{"cpu 1.5\n", 0, false},
		{"cpu\n", 0, false},
		{"devserver-ready 127.0.0.1:7233 default\n", 0, false},
	} {
		d, ok := parseCPU(tc.line)
		if d != tc.d || ok != tc.ok {
			t.Errorf("parseCPU(%q) = %v, %v; want %v, %v", tc.line, d, ok, tc.d, tc.ok)
		}
	}
}
