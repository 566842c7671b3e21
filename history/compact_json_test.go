package history

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// checkCompactValid fails if compactValid accepts what json.Compact would reject or change.
func checkCompactValid(t *testing.T, raw []byte) bool {
	t.Helper()
	ok := compactValid(raw)
	var buf bytes.Buffer
	err := json.Compact(&buf, raw)
	if ok && (err != nil || !bytes.Equal(buf.Bytes(), raw)) {
		t.Fatalf("compactValid(%q) = true; json.Compact: %q, %v", raw, buf.Bytes(), err)
	}
	return ok
}

func TestCompactValid(t *testing.T) {
	for _, c := range []struct {
		raw  string
		want bool
	}{
		{`null`, true}, {`true`, true}, {`false`, true}, {`0`, true}, {`-0.5e+10`, true}, {`12E3`, true},
		{`"a\"\\\/\b\f\n\r\t\u00e9\uD83D"`, true}, {"\"\xff\xe2\x80\xa8\"", true}, {`{}`, true}, {`[]`, true},
		{`{"a":[1,{"b":null}],"c":""}`, true}, {`[[[]]]`, true},
		// valid but not compact: left to json.Compact
		{` 1`, false}, {`[1, 2]`, false}, {"{\"a\":1}\n", false}, {`{ }`, false},
		// invalid
		{``, false}, {`nul`, false}, {`tru`, false}, {`01`, false}, {`-`, false}, {`1.`, false}, {`.5`, false}, {`1e`, false},
		{`1e+`, false}, {`+1`, false}, {`"abc`, false}, {"\"a\x01\"", false}, {`"\x"`, false}, {`"\u12"`, false},
		{`"\u12g4"`, false}, {`{"a"}`, false}, {`{"a":}`, false}, {`{a:1}`, false}, {`{"a":1,}`, false}, {`[1,]`, false},
		{`[1`, false}, {`{"a":1`, false}, {`1 2`, false}, {`12`, true}, {`[1]]`, false}, {`NaN`, false}, {`"\`, false},
		{strings.Repeat("[", maxDepth) + strings.Repeat("]", maxDepth), true},
		{strings.Repeat("[", maxDepth+1) + strings.Repeat("]", maxDepth+1), false},
	} {
		if got := checkCompactValid(t, []byte(c.raw)); got != c.want {
			t.Errorf("compactValid(%q) = %v, want %v", c.raw, got, c.want)
		}
	}
}

func FuzzCompactValid(f *testing.F) {
	for _, s := range []string{`{"a":[1,-2.5e3,"x\u00e9\n"],"b":{"c":null,"d":true}}`, `[]`, `"\ud800"`, ` [1 ]`, `{"a":01}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		checkCompactValid(t, raw)
		var buf bytes.Buffer
		if json.Compact(&buf, raw) == nil && len(buf.Bytes()) < 1<<12 && !compactValid(buf.Bytes()) &&
			bytes.Count(buf.Bytes(), []byte("[")) < maxDepth && bytes.Count(buf.Bytes(), []byte("{")) < maxDepth {
			t.Fatalf("compactValid(%q) = false for json.Compact's own output", buf.Bytes())
		}
	})
}
