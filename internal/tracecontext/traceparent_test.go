package tracecontext

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/cespare/xxhash/v2"
)

func TestParse(t *testing.T) {
	valid := "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	tests := []struct {
		name, in string
		want     error
	}{
		{"valid", valid, nil},
		{"not sampled", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00", nil},
		{"future version with more fields", "cc-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-what", nil},
		{"empty", "", ErrMalformed},
		{"version ff", "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", ErrMalformed},
		{"version 00 too long", valid + "-x", ErrMalformed},
		{"future version glued", "cc-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01x", ErrMalformed},
		{"upper case", strings.ToUpper(valid), ErrMalformed},
		{"short trace id", "00-4bf92f3577b34da6a3ce929d0e0e473-00f067aa0ba902b7-01", ErrMalformed},
		{"bad flags", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-0g", ErrMalformed},
		{"zero trace id", "00-00000000000000000000000000000000-00f067aa0ba902b7-01", ErrZeroID},
		{"zero span id", "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01", ErrZeroID},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tp, err := Parse(tt.in)
			if !errors.Is(err, tt.want) {
				t.Fatalf("Parse(%q) = %v, want %v", tt.in, err, tt.want)
			}
			if err == nil && tt.in[:2] == "00" && tp.String() != tt.in {
				t.Fatalf("String() = %q, want %q", tp.String(), tt.in)
			}
		})
	}
}

func TestForRun(t *testing.T) {
	accepted := "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	tp, remote := ForRun("run-1", accepted)
	if !remote || tp.TraceIDString() != "4bf92f3577b34da6a3ce929d0e0e4736" {
		t.Fatalf("ForRun with a traceparent = %v %v, want its trace id and a remote parent", tp, remote)
	}
	a, remoteA := ForRun("run-1", "")
	b, _ := ForRun("run-1", "")
	c, _ := ForRun("run-2", "")
	if remoteA || a != b || a.TraceID == c.TraceID || a.TraceID == ([16]byte{}) {
		t.Fatalf("derived trace ids: %v %v %v (remote %v): want equal for one run, distinct across runs", a, b, c, remoteA)
	}
	if bad, remote := ForRun("run-1", "garbage"); remote || bad != a {
		t.Fatalf("ForRun with an unreadable traceparent = %v, want the derived one", bad)
	}
}

func TestSpanIDsAreDistinctAndStable(t *testing.T) {
	ids := map[[8]byte]string{}
	add := func(name string, id [8]byte) {
		t.Helper()
		if other, dup := ids[id]; dup {
			t.Fatalf("%s and %s share span id %x", name, other, id)
		}
		ids[id] = name
	}
	add("run", RunSpanID("r"))
	add("step", StepSpanID("r", "e"))
	add("try1", TrySpanID("r", "e", 1))
	add("try2", TrySpanID("r", "e", 2))
	add("other run's try1", TrySpanID("r2", "e", 1))
	if first, again := TrySpanID("r", "e", 1), TrySpanID("r", "e", 1); first != again {
		t.Fatal("TrySpanID is not a function of its arguments")
	}
	got := ForTry("r", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", "e", 2)
	tp, err := Parse(got)
	if err != nil || tp.TraceIDString() != "4bf92f3577b34da6a3ce929d0e0e4736" || tp.SpanID != TrySpanID("r", "e", 2) {
		t.Fatalf("ForTry = %q (%v), want the accepted trace and the try's span", got, err)
	}
}

func FuzzParse(f *testing.F) {
	f.Add("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
	f.Add("cc-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-x")
	f.Add("")
	f.Fuzz(func(t *testing.T, s string) {
		tp, err := Parse(s)
		if err != nil {
			return
		}
		again, err := Parse(tp.String())
		if err != nil || again != tp {
			t.Fatalf("Parse(%q) = %v, but its String %q reads back as %v, %v", s, tp, tp.String(), again, err)
		}
	})
}

// TestIDsAreTheHashOfTheirNames: a span id is the XXH64 (big-endian) of its kind, run,
// execution and attempt, and a run's trace id the first 16 bytes of the SHA-256 of its run id:
// every process derives the same ids, so their spans join one tree.
func TestIDsAreTheHashOfTheirNames(t *testing.T) {
	long := strings.Repeat("r", 300) // longer than the ids' stack buffers
	for _, run := range []string{"r", long} {
		for _, exec := range []string{"e", long} {
			var want [8]byte
			binary.BigEndian.PutUint64(want[:], xxhash.Sum64([]byte("wend span\x00try\x00"+run+"\x00"+exec+"\x0012")))
			if got := TrySpanID(run, exec, 12); got != want {
				t.Errorf("TrySpanID(%d-byte run, %d-byte exec) = %x, want %x", len(run), len(exec), got, want)
			}
		}
		sum := sha256.Sum256([]byte("wend trace\x00" + run))
		if tp, _ := ForRun(run, ""); !bytes.Equal(tp.TraceID[:], sum[:16]) {
			t.Errorf("ForRun(%d-byte run) trace id %x, want %x", len(run), tp.TraceID, sum[:16])
		}
	}
	if got := TrySpanID("r", "e", 12); got != [8]byte{0x79, 0x74, 0x34, 0xf1, 0xbf, 0xf6, 0xf5, 0xb3} {
		t.Errorf("TrySpanID(r, e, 12) = %x: the ids changed, so spans of a run exported before and after no longer join", got)
	}
}

// TestSpanIDsOfARunAreDistinct: the span ids of a large run (its tries, steps, timers, waits
// and children, 20,000 each) are all distinct and non-zero, as the ids of one trace
// must be.
func TestSpanIDsOfARunAreDistinct(t *testing.T) {
	const n = 20000
	seen := make(map[[8]byte]string, 6*n)
	add := func(name string, id [8]byte) {
		if id == ([8]byte{}) {
			t.Fatalf("%s: zero span id", name)
		}
		if other, dup := seen[id]; dup {
			t.Fatalf("%s and %s share span id %x", name, other, id)
		}
		seen[id] = name
	}
	const run = "01JEXAMPLERUNID0000000000"
	add("run", RunSpanID(run))
	for i := range n {
		exec := run + "/steps/" + strconv.Itoa(i)
		add("step "+exec, StepSpanID(run, exec))
		add("try 1 "+exec, TrySpanID(run, exec, 1))
		add("try 2 "+exec, TrySpanID(run, exec, 2))
		add("timer "+exec, TimerSpanID(run, exec))
		add("signal "+exec, SignalWaitSpanID(run, exec))
		add("child "+exec, ChildSpanID(run, exec))
	}
}

// TestTryOfTheRunsContextIsForTry: a caller that keeps the run's context (ForRun) gets the
// same traceparent for every try as one that derives it again each time.
func TestTryOfTheRunsContextIsForTry(t *testing.T) {
	for _, tc := range []struct{ name, run, accepted, exec string }{
		{"derived trace", "run-1", "", "exec-a"},
		{"accepted trace", "run-1", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", "exec-a"},
		{"unreadable accepted", "run-2", "garbage", "exec-b"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			run, _ := ForRun(tc.run, tc.accepted)
			for attempt := 1; attempt <= 3; attempt++ {
				if got, want := TryOf(run, tc.run, tc.exec, attempt), ForTry(tc.run, tc.accepted, tc.exec, attempt); got != want {
					t.Fatalf("try %d: TryOf = %q, ForTry = %q", attempt, got, want)
				}
			}
		})
	}
}

// BenchmarkTryTraceParent: a try's traceparent derived from scratch against one from the
// run's kept context.
func BenchmarkTryTraceParent(b *testing.B) {
	const run, exec = "01JEXAMPLERUNID0000000000", "01JEXAMPLERUNID0000000000/steps/3"
	b.Run("ForTry", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			_ = ForTry(run, "", exec, i)
		}
	})
	b.Run("TryOf", func(b *testing.B) {
		b.ReportAllocs()
		tp, _ := ForRun(run, "")
		for i := 0; b.Loop(); i++ {
			_ = TryOf(tp, run, exec, i)
		}
	})
}
