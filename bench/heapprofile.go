package main

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/wendflow/wend/bench/harness"
)

// heapAsk asks a heapserve process (bench/heapserve: wend's command line that writes a heap
// profile when asked on its stdin) for a profile of its live heap.
type heapAsk struct {
	path string
	r, w *os.File // the pipe to the process's stdin
}

// heapServe makes o start heapserve in place of cmd/wend, with the same flags, writing its
// profile to path when asked.
func (b *bench) heapServe(o *harness.Options, path string) *heapAsk {
	bin := b.path("heapserve")
	goBuild(bin, "github.com/wendflow/wend/bench/heapserve")
	r, w, err := os.Pipe()
	if err != nil {
		fail(err)
	}
	path, err = filepath.Abs(path)
	if err != nil {
		fail(err)
	}
	o.Bin, o.Stdin = bin, r
	o.Env = append(os.Environ(), "WEND_BENCH_HEAPPROFILE="+path)
	return &heapAsk{path: path, r: r, w: w}
}

// cpuServe makes o start heapserve in place of cmd/wend, with the same flags, profiling its CPU
// from its start until asked (ask("cpu")), the profile written to path.
func (b *bench) cpuServe(o *harness.Options, path string) *heapAsk {
	h := b.heapServe(o, path)
	o.Env = append(os.Environ(), "WEND_BENCH_CPUPROFILE="+h.path, "WEND_BENCH_CPUPROFILE_AT_START=1")
	return h
}

// started closes this process's copy of the child's end of the pipe.
func (h *heapAsk) started() { h.r.Close() }

// write asks for the heap profile and waits (a minute at most) until it is there.
func (h *heapAsk) write() error { return h.ask("heap") }

// writeTo asks for a heap profile while the process goes on (more may be asked for), waits
// until it is there and moves it to dst.
func (h *heapAsk) writeTo(dst string) error {
	if err := h.send("heap"); err != nil {
		return err
	}
	return os.Rename(h.path, dst)
}

// ask sends line (heap: write a heap profile; cpu: end the CPU profile) and waits (a minute at
// most) until the profile is there; it is the last line sent.
func (h *heapAsk) ask(line string) error {
	defer h.w.Close()
	return h.send(line)
}

// send sends line and waits (a minute at most) until the profile is there.
func (h *heapAsk) send(line string) error {
	_ = os.Remove(h.path)
	if _, err := fmt.Fprintln(h.w, line); err != nil {
		return fmt.Errorf("ask for a %s profile: %w", line, err)
	}
	deadline := time.Now().Add(time.Minute)
	for {
		if _, err := os.Stat(h.path); err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("no heap profile at %s a minute after asking", h.path)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
