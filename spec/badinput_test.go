package spec

import (
	"bytes"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// badInputAllocLimit bounds what loading one bad input may allocate in total.
const badInputAllocLimit = 256 << 20

const bombHead = "wend: v1\nname: bomb\nplugins: {demo: ./demo}\nsteps:\n  - activity: demo.echo\n    with:\n"

// aliasBomb is a billion-laughs workflow: level 0 holds ten strings, each next level ten
// aliases of the one before, so level n expands to 10^(n+1) strings. style is "seq", "map"
// or "merge" (each level merges the one before with <<).
func aliasBomb(levels int, style string) []byte {
	var b strings.Builder
	b.WriteString(bombHead)
	b.WriteString("      l0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]\n")
	for i := 1; i <= levels; i++ {
		var items []string
		for j := range 10 {
			switch style {
			case "seq":
				items = append(items, fmt.Sprintf("*l%d", i-1))
			default:
				items = append(items, fmt.Sprintf("k%d: *l%d", j, i-1))
			}
		}
		switch style {
		case "seq":
			fmt.Fprintf(&b, "      l%d: &l%d [%s]\n", i, i, strings.Join(items, ", "))
		case "map":
			fmt.Fprintf(&b, "      l%d: &l%d {%s}\n", i, i, strings.Join(items, ", "))
		case "merge":
			if i == 1 {
				fmt.Fprintf(&b, "      l1: &l1 {%s}\n", strings.Join(items, ", "))
				continue
			}
			fmt.Fprintf(&b, "      l%d: &l%d {<<: [*l%d], %s}\n", i, i, i-1, strings.Join(items, ", "))
		}
	}
	return []byte(b.String())
}

// nested is a workflow whose mappings and lists nest exactly levels deep, counting the
// top-level mapping as level 1: the top level, steps, the step, then flow lists under with.
func nested(levels int) []byte {
	inner := levels - 3
	return []byte(bombHead[:len(bombHead)-len("    with:\n")] + "    with: " +
		strings.Repeat("[", inner) + "1" + strings.Repeat("]", inner) + "\n")
}

// manyKeys is a workflow whose step input has n keys, written compactly (flow style, keys
// without values) so 200,000 keys fit in 1 MiB.
func manyKeys(n int) []byte {
	const alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
	var b bytes.Buffer
	b.WriteString(bombHead[:len(bombHead)-len("    with:\n")] + "    with: {")
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		x := i
		for range 4 {
			b.WriteByte(alphabet[x%len(alphabet)])
			x /= len(alphabet)
		}
	}
	b.WriteString("}\n")
	return b.Bytes()
}

// blockKeys is a workflow whose step input has n keys in block style, one per line.
func blockKeys(n int) []byte {
	var b bytes.Buffer
	b.WriteString(bombHead)
	for i := range n {
		fmt.Fprintf(&b, "      k%d: %d\n", i, i)
	}
	return b.Bytes()
}

// sized pads a valid workflow with a comment to exactly n bytes.
func sized(n int) []byte {
	base := "wend: v1\nname: big\nsteps:\n  - delay: 1s\n#"
	return []byte(base + strings.Repeat("x", n-len(base)-1) + "\n")
}

type badInput struct {
	name string
	data []byte
	want string // a substring of the first error
	line int    // the line of the first error; 0 for a finding about the whole file
}

func badInputs() []badInput {
	const ok = "wend: v1\nname: ok\nplugins: {demo: ./demo}\nsteps:\n  - activity: demo.echo\n"
	cases := []badInput{}
	for _, levels := range []int{5, 9, 12} {
		cases = append(cases,
			badInput{fmt.Sprintf("alias bomb seq L%d", levels), aliasBomb(levels, "seq"), "are not supported", 0},
			badInput{fmt.Sprintf("alias bomb map L%d", levels), aliasBomb(levels, "map"), "are not supported", 0},
			badInput{fmt.Sprintf("alias bomb merge L%d", levels), aliasBomb(levels, "merge"), "are not supported", 0},
		)
	}
	cases = append(cases,
		badInput{"alias bomb L6 inline", []byte(bombHead + "      a: &a [x, x, x, x, x, x, x, x, x, x]\n      b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\n      c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\n      d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]\n      e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]\n      f: [*e, *e, *e, *e, *e, *e, *e, *e, *e, *e]\n"), "are not supported", 0},
		badInput{"merge key without anchors", []byte(ok + "    with: {<<: {a: 1}}\n"), "merge keys", 6},
		badInput{"nesting 65", nested(65), "nesting is deeper than 64 levels", 6},
		badInput{"nesting 9999", nested(9999), "nesting is deeper than 64 levels", 6},
		badInput{"nesting 10001", nested(10001), "nesting is deeper than 64 levels", 6},
		badInput{"40000 keys flow", manyKeys(40_000), "over the limit of 1000", 6},
		badInput{"40000 keys block", blockKeys(40_000), "over the limit of 1000", 7},
		badInput{"200000 keys flow", manyKeys(200_000), "more than 100000 YAML nodes", 6},
		badInput{"520000 flow items", flowItems(MaxFileBytes), "more than 100000 YAML nodes", 6},
		badInput{"1 MiB + 1 byte", sized(MaxFileBytes + 1), "over the 1048576-byte limit", 0},
		badInput{"latin-1 byte", []byte(ok + "    with: {city: \"Z\xfcrich\"}\n"), "not valid UTF-8", 6},
		badInput{"UTF-16 with BOM", utf16LE(ok), "not valid UTF-8", 1},
		badInput{"overlong encoding", []byte(ok + "# \xc0\xaf\n"), "not valid UTF-8", 6},
		badInput{"NUL byte", []byte(ok + "    with: {x: \"a\x00b\"}\n"), "control characters", 6},
		badInput{"retry: no (YAML 1.1 false)", []byte(ok + "    retry: no\n"), "expected mapping", 6},
		badInput{"compensate_on_failure: yes (YAML 1.1 true)", []byte("compensate_on_failure: yes\n" + ok), "expected boolean", 1},
		badInput{"continue_as_new: on (YAML 1.1 true)", []byte("wend: v1\nname: ok\nsteps:\n  - continue_as_new: on\n"), "must be true", 4},
		badInput{"tab indentation", []byte(ok + "\twith: {x: 1}\n"), "tab character", 6},
		badInput{"duplicate key", []byte(ok + "    activity: demo.greet\n"), `duplicate key "activity"`, 6},
		badInput{"duplicate top-level key", []byte(ok + "name: again\n"), `duplicate key "name"`, 6},
		badInput{"two documents", []byte(ok + "---\n" + ok), "more than one YAML document", 6},
		badInput{"document end then garbage", []byte(ok + "...\n: :\n"), "invalid YAML", 7},
		badInput{"unknown field", []byte(ok + "    retries: 3\n"), `unknown key "retries"`, 6},
		badInput{"unclosed flow", []byte(ok + "    with: {x: [1, 2\n"), "invalid YAML", 6},
		badInput{"unclosed quote", []byte(ok + "    with: {x: \"abc}\n"), "invalid YAML", 6},
		badInput{"only a document marker", []byte("---\n"), "no content", 0},
		badInput{"whitespace only", []byte("  \n\n\t\n"), "file is empty", 0},
		badInput{"top-level scalar", []byte("hello\n"), "must be a mapping", 1},
		badInput{"top-level null", []byte("~\n"), "must be a mapping", 1},
		badInput{"unknown tag", []byte(ok + "    with: !custom x\n"), "", 6},
		badInput{"non-scalar key", []byte(ok + "    with: {[a]: 1}\n"), "mapping keys must be plain strings", 6},
	)
	return cases
}

func utf16LE(s string) []byte {
	out := []byte{0xff, 0xfe}
	for _, r := range s {
		out = append(out, byte(r), 0)
	}
	return out
}

// TestBadInput feeds hostile and broken files to Load (docs/reliability.md H1, H3, H4, H5): each is
// refused with one clear, positioned, single-line error, fast and with bounded allocation.
func TestBadInput(t *testing.T) {
	for _, tc := range badInputs() {
		t.Run(tc.name, func(t *testing.T) {
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			var ds Diagnostics
			checkCPU(t, "Load", func() { _, ds = Load("bad.wend.yaml", tc.data) })
			runtime.ReadMemStats(&after)
			alloc := after.TotalAlloc - before.TotalAlloc
			t.Logf("%d bytes, %.1f MiB allocated: %v", len(tc.data), float64(alloc)/(1<<20), ds)
			if alloc > badInputAllocLimit {
				t.Errorf("allocated %d MiB, over %d MiB", alloc>>20, badInputAllocLimit>>20)
			}
			if !ds.HasErrors() {
				t.Fatalf("accepted; want an error")
			}
			if len(ds) != 1 {
				t.Errorf("want one finding, got %d:\n%s", len(ds), ds.Error())
			}
			checkPositions(t, ds)
			d := ds[0]
			if !strings.Contains(d.Message, tc.want) {
				t.Errorf("first finding %q does not contain %q", d.String(), tc.want)
			}
			if d.Line != tc.line && tc.line != 0 {
				t.Errorf("first finding at line %d, want line %d: %s", d.Line, tc.line, d)
			}
			if len(d.String()) > 300 {
				t.Errorf("finding is %d characters long; keep it to one readable line: %s", len(d.String()), d)
			}
		})
	}
}

// TestLimitsAccepted checks the limits are where the docs say: a file may nest exactly 64
// levels, hold 1,000 keys in a mapping and be exactly 1 MiB.
func TestLimitsAccepted(t *testing.T) {
	for _, tc := range []struct {
		name string
		data []byte
	}{
		{"nesting 64", nested(MaxDepth)},
		{"1000 keys", blockKeys(MaxKeysPerMapping)},
		{"exactly 1 MiB", sized(MaxFileBytes)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, ds := Load("ok.wend.yaml", tc.data); len(ds) > 0 {
				t.Fatalf("want no findings, got:\n%s", ds.Error())
			}
		})
	}
}

// TestWalkersStopAtAliases runs every yaml.Node walker of the package over an L9 alias bomb
// (docs/reliability.md H2): each must refuse or stop without expanding it.
func TestWalkersStopAtAliases(t *testing.T) {
	var doc yaml.Node
	if err := yaml.Unmarshal(aliasBomb(9, "seq"), &doc); err != nil {
		t.Fatal(err)
	}
	walkers := []struct {
		name string
		run  func() error
	}{
		{"checkTree", func() error {
			if ds := checkTree("f", &doc); len(ds) > 0 {
				return ds
			}
			return nil
		}},
		{"yamlToJSON", func() error { _, err := yamlToJSON(&doc); return err }},
		{"schemaDiagnostics", func() error {
			if ds := schemaDiagnostics("f", doc.Content[0]); len(ds) > 0 {
				return Diagnostics(ds)
			}
			return nil
		}},
	}
	for _, w := range walkers {
		t.Run(w.name, func(t *testing.T) {
			var err error
			checkCPU(t, w.name, func() { err = w.run() })
			if err == nil || !strings.Contains(err.Error(), "alias") && !strings.Contains(err.Error(), "anchor") {
				t.Errorf("want an error about anchors or aliases, got %v", err)
			}
		})
	}
}

// BenchmarkBadInput measures how fast each bad input is refused.
func BenchmarkBadInput(b *testing.B) {
	for _, tc := range badInputs() {
		b.Run(strings.ReplaceAll(tc.name, " ", "_"), func(b *testing.B) {
			b.SetBytes(int64(len(tc.data)))
			b.ReportAllocs()
			for b.Loop() {
				Load("bad.wend.yaml", tc.data)
			}
		})
	}
}
