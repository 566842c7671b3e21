// Command heapserve is wend's command line as cmd/wend builds it, for the benchmarks: with
// WEND_BENCH_HEAPPROFILE naming a file, each line "heap" on its standard input makes it write a
// profile of its live heap there (go tool pprof reads it). `go run ./bench -only idle
// -idle-dump DIR` runs it in place of cmd/wend and asks right before it stops `wend serve`, to
// see what the engine holds with every run open. wend itself has no such switch.
package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/pprof"
	"strings"

	"github.com/wendflow/wend/internal/cli"
)

// profileEnv names the file the profile goes to.
const profileEnv = "WEND_BENCH_HEAPPROFILE"

func main() {
	if path := os.Getenv(profileEnv); path != "" {
		go answer(os.Stdin, os.Stderr, path)
	}
	os.Exit(cli.Main())
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
