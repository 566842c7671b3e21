package interpreter

import (
	"strconv"

	"github.com/wendflow/wend/history"
)

// fastValue decodes b into the value encoding/json's Unmarshal into an `any` gives (maps,
// []any, float64, string, bool, nil), for the JSON it handles: strings without escapes,
// numbers that parse, nesting under maxFastDepth. For anything else, valid or not, ok is false
// and the caller decodes with encoding/json, so results and errors stay exactly its own
// (FuzzFastValue holds it to that). Every step's outcome is decoded on the run's path, and
// encoding/json's decoder was the most of Apply's CPU (docs/performance.md).
func fastValue(b []byte) (v any, ok bool) {
	d := valueDecoder{b: b}
	if len(b) <= maxSharedText {
		d.s = string(b)
	}
	v, ok = d.value(0)
	if !ok {
		return nil, false
	}
	d.space()
	return v, d.i == len(d.b)
}

const maxFastDepth = 64

// maxSharedText is the largest payload whose strings are cut from one copy of it: one
// allocation instead of one a key and string, but a string kept (a `set` of one field of the
// output) keeps the whole copy, so large payloads copy each string on its own.
const maxSharedText = 4 << 10

type valueDecoder struct {
	b []byte
	s string // b as one string when small: keys and strings are slices of it
	i int
}

func (d *valueDecoder) space() {
	for d.i < len(d.b) {
		switch d.b[d.i] {
		case ' ', '\t', '\n', '\r':
			d.i++
		default:
			return
		}
	}
}

// next skips space and reports whether the next byte is c, consuming it if so.
func (d *valueDecoder) next(c byte) bool {
	d.space()
	if d.i < len(d.b) && d.b[d.i] == c {
		d.i++
		return true
	}
	return false
}

func (d *valueDecoder) value(depth int) (any, bool) {
	d.space()
	if d.i >= len(d.b) || depth > maxFastDepth {
		return nil, false
	}
	switch c := d.b[d.i]; c {
	case '{':
		d.i++
		m := make(map[string]any)
		if d.next('}') {
			return m, true
		}
		for {
			d.space()
			k, ok := d.str()
			if !ok || !d.next(':') {
				return nil, false
			}
			v, ok := d.value(depth + 1)
			if !ok {
				return nil, false
			}
			m[k] = v
			if d.next(',') {
				continue
			}
			if d.next('}') {
				return m, true
			}
			return nil, false
		}
	case '[':
		d.i++
		l := make([]any, 0)
		if d.next(']') {
			return l, true
		}
		for {
			v, ok := d.value(depth + 1)
			if !ok {
				return nil, false
			}
			l = append(l, v)
			if d.next(',') {
				continue
			}
			if d.next(']') {
				return l, true
			}
			return nil, false
		}
	case '"':
		return d.str()
	case 't':
		return true, d.word("true")
	case 'f':
		return false, d.word("false")
	case 'n':
		return nil, d.word("null")
	default:
		return d.number()
	}
}

func (d *valueDecoder) word(w string) bool {
	if len(d.b)-d.i < len(w) || string(d.b[d.i:d.i+len(w)]) != w {
		return false
	}
	d.i += len(w)
	return true
}

// str reads a string without escapes or control bytes, in valid UTF-8: its bytes are then
// its value, as encoding/json's unquote has them.
func (d *valueDecoder) str() (string, bool) {
	start := d.i + 1
	end, ok := history.PlainJSONString(d.b, d.i)
	if !ok {
		return "", false
	}
	d.i = end
	if d.s == "" {
		return string(d.b[start : end-1]), true
	}
	return d.s[start : end-1], true
}

// number reads a number of JSON's grammar and parses it as encoding/json does
// (strconv.ParseFloat, 64 bits); one out of range is left to encoding/json's error.
func (d *valueDecoder) number() (any, bool) {
	b, start := d.b, d.i
	i := start
	digits := func() bool {
		j := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		return i > j
	}
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		digits()
	default:
		return nil, false
	}
	if i < len(b) && b[i] == '.' {
		i++
		if !digits() {
			return nil, false
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if !digits() {
			return nil, false
		}
	}
	var f float64
	var err error
	if d.s != "" {
		f, err = strconv.ParseFloat(d.s[start:i], 64)
	} else {
		f, err = strconv.ParseFloat(string(b[start:i]), 64)
	}
	if err != nil {
		return nil, false
	}
	d.i = i
	return f, true
}
