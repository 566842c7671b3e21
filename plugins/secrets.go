package plugins

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"

	"github.com/wendflow/wend/history"
)

// TypeSecretMissing fails a try whose input references a secret the host cannot read.
const TypeSecretMissing = "SecretMissing"

// secretMask replaces a secret's value wherever a plugin echoes it back.
const secretMask = "***"

// secretRef is the text that stands for a secret in a call's input (spec.SecretRef).
func secretRef(name string) string { return "${{ secrets." + name + " }}" }

// resolveSecrets reads the value of each secret call.Input references, from the host's
// environment or a file, just before the call: the values exist nowhere else.
func resolveSecrets(call history.ActivityCall) (map[string]string, error) {
	var vals map[string]string
	for _, ref := range call.Secrets {
		if !bytes.Contains(call.Input, []byte(secretRef(ref.Name))) {
			continue
		}
		v, err := readSecret(ref)
		if err != nil {
			return nil, &history.ActivityError{Category: history.CategoryActivity, Type: TypeSecretMissing, NonRetryable: true,
				Message: fmt.Sprintf("plugin %s: activity %s: secret %s: %v", call.Plugin, call.Activity, ref.Name, err)}
		}
		if vals == nil {
			vals = map[string]string{}
		}
		vals[ref.Name] = v
	}
	return vals, nil
}

func readSecret(ref history.SecretRef) (string, error) {
	if ref.Env != "" {
		v, ok := os.LookupEnv(ref.Env)
		if !ok || v == "" {
			return "", fmt.Errorf("environment variable %s is not set (set it where wend runs)", ref.Env)
		}
		return v, nil
	}
	b, err := os.ReadFile(ref.File)
	if err != nil {
		return "", fmt.Errorf("read %s: %w", ref.File, errWithoutContent(err))
	}
	v := strings.TrimRight(string(b), "\r\n")
	if v == "" {
		return "", fmt.Errorf("%s is empty", ref.File)
	}
	return v, nil
}

// errWithoutContent keeps an error's kind (not found, permission) without more.
func errWithoutContent(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// withSecrets puts the values in place of their references in input (JSON text: each value
// goes in JSON-escaped).
func withSecrets(input json.RawMessage, vals map[string]string) json.RawMessage {
	if len(vals) == 0 {
		return input
	}
	s := string(input)
	for name, v := range vals {
		esc, _ := json.Marshal(v)
		s = strings.ReplaceAll(s, secretRef(name), string(esc[1:len(esc)-1]))
	}
	return json.RawMessage(s)
}

// masker hides secret values in what comes back from plugins: outputs, errors, heartbeats
// and stderr lines.
type masker struct {
	mu   sync.Mutex
	vals map[string]bool
}

func (m *masker) add(vals map[string]string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.vals == nil {
		m.vals = map[string]bool{}
	}
	for _, v := range vals {
		m.vals[v] = true
	}
}

func (m *masker) values() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]string, 0, len(m.vals))
	for v := range m.vals {
		out = append(out, v)
	}
	return out
}

// text masks every known value in s.
func (m *masker) text(s string) string {
	for _, v := range m.values() {
		s = strings.ReplaceAll(s, v, secretMask)
	}
	return s
}

// json masks every known value inside the strings of a JSON document; a document without
// one is returned as it is.
func (m *masker) json(raw json.RawMessage) json.RawMessage {
	hit := false
	for _, v := range m.values() {
		esc, _ := json.Marshal(v)
		if bytes.Contains(raw, esc[1:len(esc)-1]) {
			hit = true
			break
		}
	}
	if !hit {
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
