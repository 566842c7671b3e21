package spec

import (
	"bytes"
	"math"
	"runtime"
	"strings"
	"testing"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

// treeNodes counts the nodes yaml builds for data, the document node included, as checkTree
// does; ok is false when yaml refuses data.
func treeNodes(data []byte) (n int, ok bool) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return 0, false
	}
	stack := []*yaml.Node{&doc}
	for len(stack) > 0 {
		x := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		n++
		stack = append(stack, x.Content...)
	}
	return n, true
}

// precountSlack is how far precountNodes may fall below the tree's count: the document node
// and a root scalar, which no indicator announces.
const precountSlack = 2

func TestPrecountNeverUndercounts(t *testing.T) {
	for _, src := range []string{
		"a: 1\n",
		"hello\n",
		"[]\n",
		"[a, b, c]\n",
		"[a, b, c,]\n",
		"{a, b, c}\n",
		"{a: 1, b, c: [x, {y}]}\n",
		"[a: 1, b: 2]\n",
		"- a\n- b\n-\n- - c\n  - d\n",
		"? a\n? b\n: c\n",
		"[? a, ? b]\n",
		"a:\n  b:\n    c: [1, 2]\n  d: |\n    - not: a node\n",
		"\"a\":1\n",
		"{\"a\":1,\"b\":2}\n",
		"a: 'it''s' # - b: c\n",
		"a: x\n  - y\n",
		"wend: v1\nname: x\nsteps:\n  - delay: 1s\n",
		"[\"]\", a, b, c, d]\n",            // a bracket in a quoted scalar
		"[{\"]\", a, b, c}, {\"}\", d}]\n", // ... that would close a flow mapping early
		"{a:, \"e\":f}\n",
		"[[c]: d]\n",
		"a: it's\nb: [x, y, z]\nc: don't\n",
		"[?0]\n", // '?' in a flow collection is a key whatever follows it (found by FuzzPrecount)
		"[?a:b]\n", "{?}\n", "{? a, b}\n",
	} {
		want, ok := treeNodes([]byte(src))
		if !ok {
			t.Fatalf("yaml refuses %q", src)
		}
		if got, _, _ := precountNodes([]byte(src), math.MaxInt); got < want-precountSlack {
			t.Errorf("precountNodes(%q) = %d, yaml builds %d nodes", src, got, want)
		}
	}
}

// FuzzPrecount holds precountNodes to its promise on any input yaml accepts: it never falls
// more than two below the number of nodes yaml builds, so no file can slip a big tree past
// it. (FuzzParse covers the whole loader; this one aims at the count.)
//
//	go test ./spec -run '^$' -fuzz '^FuzzPrecount$' -fuzztime 1m
func FuzzPrecount(f *testing.F) {
	for _, s := range []string{"a: [1, {b: c}, d]\n", "- ? x\n  : y\n", "{a, b: [c, d], e}\n", "a: |\n  - b\n", "'a:b': \"c,d\"\n"} {
		f.Add([]byte(s))
	}
	for _, tc := range badInputs() {
		if len(tc.data) <= 4<<10 {
			f.Add(tc.data)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 4<<10 || !utf8.Valid(data) || bytes.Contains(data, []byte{'*'}) && bytes.Contains(data, []byte{'&'}) {
			return // parseYAML counts UTF-8 only; an alias's tree is its anchor's, and loading refuses both
		}
		want, ok := treeNodes(data)
		if !ok {
			return
		}
		if got, _, _ := precountNodes(data, math.MaxInt); got < want-precountSlack {
			t.Fatalf("precountNodes = %d, yaml builds %d nodes for %q", got, want, data)
		}
	})
}

// flowItems is a workflow whose step input is one flow list of 1s, as many as fit in size
// bytes: the 1 MiB file of 520,000 items.
func flowItems(size int) []byte {
	head := bombHead[:len(bombHead)-len("    with:\n")] + "    with: {x: ["
	n := (size - len(head) - len("]}\n") + 1) / 2
	return []byte(head + strings.Repeat("1,", n-1) + "1]}\n")
}

// A file over MaxNodes is refused before yaml builds its tree: 1 MiB of flow items used to
// allocate 175 MB (and 0.45 s of CPU) on the way to the refusal; it must stay under 50 MB.
// The bound is on bytes allocated, not time: BenchmarkBadInput prices the CPU.
func TestYAMLNodeLimitBeforeParsing(t *testing.T) {
	const allocLimit = 50 << 20
	block := "wend: v1\nname: x\nsteps:\n  - delay: 1s\n    with:\n" + strings.Repeat("      - 1\n", 104_000)
	pairs := "wend: v1\nname: x\nsteps:\n  - delay: 1s\n    with:\n" + strings.Repeat("      - {a: 1, b: 2, c: 3, d: 4}\n", 30_000)
	for _, tc := range []struct {
		name string
		data []byte
		line int
	}{
		{"1 MiB of flow items", flowItems(MaxFileBytes), 6},
		{"104,000 block entries", []byte(block), 99_995},
		{"30,000 small mappings", []byte(pairs), 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if len(tc.data) > MaxFileBytes {
				t.Fatalf("input is %d bytes, over the file limit: it would be refused for its size", len(tc.data))
			}
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			_, ds := Load("big.wend.yaml", tc.data)
			runtime.ReadMemStats(&after)
			alloc := after.TotalAlloc - before.TotalAlloc
			t.Logf("%d bytes: %.1f MiB allocated: %v", len(tc.data), float64(alloc)/(1<<20), ds)
			if len(ds) != 1 || !strings.Contains(ds[0].Message, "file has more than 100000 YAML nodes; split it with run_workflow") {
				t.Fatalf("findings: %v", ds)
			}
			if tc.line != 0 && ds[0].Line != tc.line {
				t.Errorf("refused at line %d, want %d", ds[0].Line, tc.line)
			}
			if alloc > allocLimit {
				t.Errorf("allocated %d MiB to refuse it, over %d MiB", alloc>>20, allocLimit>>20)
			}
		})
	}
}
