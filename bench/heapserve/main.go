// Command heapserve is wend's command line as cmd/wend builds it, for the benchmarks: with
// WEND_BENCH_HEAPPROFILE naming a file, each line "heap" on its standard input makes it write a
// profile of its live heap there (go tool pprof reads it). `go run ./bench -only idle
// -idle-dump DIR` runs it in place of cmd/wend and asks right before it stops `wend serve`, to
// see what the engine holds with every run open. With WEND_BENCH_CPUPROFILE naming a file, a
// line "cpu" starts a CPU profile to it and the next "cpu" ends it (`-only servecpu
// -servecpu-profile FILE`); with WEND_BENCH_CPUPROFILE_AT_START=1 as well, the profile starts
// with the process and the first "cpu" ends it (`-only idle -idle-serve-cpuprofile FILE`: a
// start's profile). wend itself has no such switch.
package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/pprof"
	"strings"

	"github.com/wendflow/wend/internal/commands"
)

// profileEnv and cpuProfileEnv name the files the profiles go to.
const (
	profileEnv    = "WEND_BENCH_HEAPPROFILE"
	cpuProfileEnv = "WEND_BENCH_CPUPROFILE"
	cpuAtStartEnv = "WEND_BENCH_CPUPROFILE_AT_START"
)

func main() {
	if path := os.Getenv(profileEnv); path != "" {
		go answer(os.Stdin, os.Stderr, path)
	} else if path := os.Getenv(cpuProfileEnv); path != "" {
		var f *os.File
		if os.Getenv(cpuAtStartEnv) == "1" {
			f = startCPU(os.Stderr, path)
		}
		go answerCPU(os.Stdin, os.Stderr, path, f)
	}
	os.Exit(commands.Main())
}

// answerCPU starts a CPU profile at a line "cpu" of in and ends it at the next; the
// profile is written to path.tmp, renamed path once whole. f is the profile's file when one
// was started already (startCPU): the first "cpu" ends it.
func answerCPU(in io.Reader, stderr io.Writer, path string, f *os.File) {
	sc := bufio.NewScanner(in)
	for sc.Scan() {
		if strings.TrimSpace(sc.Text()) != "cpu" {
			continue
		}
		if f != nil {
			pprof.StopCPUProfile()
			err := f.Close()
			if err == nil {
				err = os.Rename(path+".tmp", path)
			}
			if err != nil {
				fmt.Fprintf(stderr, "heapserve: %v\n", err)
			}
			f = nil
			continue
		}
		f = startCPU(stderr, path)
	}
}

// startCPU starts a CPU profile to path.tmp and returns its file; nil, reported on stderr, when
// it could not start.
func startCPU(stderr io.Writer, path string) *os.File {
	f, err := os.Create(path + ".tmp")
	if err == nil {
		if err = pprof.StartCPUProfile(f); err != nil {
			f.Close()
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "heapserve: %v\n", err)
		return nil
	}
	return f
}

// answer writes the profile for each "heap" line of in, until in ends; a failure is reported
// on stderr and does not stop the process.
func answer(in io.Reader, stderr io.Writer, path string) {
	sc := bufio.NewScanner(in)
	for sc.Scan() {
		if strings.TrimSpace(sc.Text()) != "heap" {
			continue
		}
		if err := writeProfile(path); err != nil {
			fmt.Fprintf(stderr, "heapserve: %v\n", err)
		}
	}
}

// writeProfile writes the heap profile to path whole or not at all (through path.tmp,
// renamed), so whoever waits for path never reads half a profile.
func writeProfile(path string) error {
	runtime.GC() // the profile's in-use figures are as of the last GC
	tmp := path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	err = pprof.Lookup("heap").WriteTo(f, 0)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
	}
	return err
}
