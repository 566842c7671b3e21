package plugins

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"sync"

	"github.com/wendflow/wend/history"
)

// secretMask replaces a secret's value, in any of its encodings, wherever it comes back.
const secretMask = "***"

// masker hides secret values in what comes back from plugins: outputs, errors, heartbeats
// and stderr lines. It knows every value this host has put into a call, in each encoding
// of encodings(): a plugin that prints one (as is, %q-quoted, in a URL, in base64) has it
// replaced all the same.
type masker struct {
	mu   sync.Mutex
	vals map[string]bool
	rep  *strings.Replacer // every encoding of every value, longest first
	find *finder           // those encodings and their JSON-escaped forms, to find a hit in JSON text
}

func (m *masker) add(vals map[string]string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.vals == nil {
		m.vals = map[string]bool{}
	}
	grew := false
	for _, v := range vals {
		if !m.vals[v] {
			m.vals[v], grew = true, true
		}
	}
	if !grew {
		return
	}
	var all []string
	for v := range m.vals {
		all = append(all, encodings(v)...)
	}
	all = longestFirst(all)
	pairs := make([]string, 0, 2*len(all))
	needles := make([][]byte, 0, 2*len(all))
	for _, e := range all {
		pairs = append(pairs, e, secretMask)
		needles = append(needles, []byte(e))
		if j := jsonEscaped(e); j != e {
			needles = append(needles, []byte(j))
		}
	}
	m.rep, m.find = strings.NewReplacer(pairs...), newFinder(needles)
}

// any reports whether m knows a value.
func (m *masker) any() bool {
	rep, _ := m.state()
	return rep != nil
}

func (m *masker) state() (*strings.Replacer, *finder) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.rep, m.find
}

// text masks every known value, in each of its encodings, in s.
func (m *masker) text(s string) string {
	rep, find := m.state()
	if rep == nil || !find.in([]byte(s)) {
		return s
	}
	return rep.Replace(s)
}

// json masks every known value inside the strings (and keys) of a JSON document; a
// document without one is returned as it is.
func (m *masker) json(raw json.RawMessage) json.RawMessage {
	_, find := m.state()
	if find == nil || !find.in(raw) {
		return raw
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var x any
	if err := dec.Decode(&x); err != nil {
		return json.RawMessage(m.text(string(raw)))
	}
	out, err := json.Marshal(m.walk(x))
	if err != nil {
		return json.RawMessage(m.text(string(raw)))
	}
	return out
}

func (m *masker) walk(x any) any {
	switch t := x.(type) {
	case string:
		return m.text(t)
	case []any:
		for i := range t {
			t[i] = m.walk(t[i])
		}
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, v := range t {
			out[m.text(k)] = m.walk(v)
		}
		return out
	}
	return x
}

// failure masks a try's error.
func (m *masker) failure(err error) error {
	var ae *history.ActivityError
	if !errors.As(err, &ae) || ae == nil {
		return err
	}
	c := *ae
	c.Message = m.text(c.Message)
	if len(c.Details) > 0 {
		c.Details = m.json(c.Details)
	}
	return &c
}
