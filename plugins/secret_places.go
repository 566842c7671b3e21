package plugins

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/wendflow/wend/history"
)

// TypeSecretPlace fails a try whose input does not hold a secret's reference where the call
// says the workflow's template put it: the host refuses the call rather than put the value
// anywhere else.
const TypeSecretPlace = "SecretPlace"

// secretRef is the text that stands for a secret in a call's input (spec.SecretRef).
func secretRef(name string) string { return "${{ secrets." + name + " }}" }

// fillSecrets puts each value at its place in input, and nowhere else: the text
// `${{ secrets.NAME }}` elsewhere in input (data from a run's input, a signal, state or an
// output) reaches the plugin as that text.
func fillSecrets(call history.ActivityCall, vals map[string]string) (json.RawMessage, error) {
	if len(call.SecretPlaces) == 0 {
		return call.Input, nil
	}
	dec := json.NewDecoder(bytes.NewReader(call.Input))
	dec.UseNumber() // numbers go back out as they came
	var doc any
	if err := dec.Decode(&doc); err != nil {
		return nil, placeError(call, "input is not JSON: %v", err)
	}
	// The last place of a string first, so that the offsets before it stay where they are.
	places := slices.Clone(call.SecretPlaces)
	slices.SortStableFunc(places, func(a, b history.SecretPlace) int { return cmp.Compare(b.Offset, a.Offset) })
	for _, pl := range places {
		var err error
		doc, err = fillAt(doc, pl.Path, func(s string) (string, error) {
			ref := secretRef(pl.Name)
			if pl.Offset < 0 || pl.Offset > len(s) || !strings.HasPrefix(s[pl.Offset:], ref) {
				return "", errors.New("no reference there")
			}
			return s[:pl.Offset] + vals[pl.Name] + s[pl.Offset+len(ref):], nil
		})
		if err != nil {
			return nil, placeError(call, "secret %s at %s (byte %d): %v", pl.Name, strings.Join(pl.Path, "."), pl.Offset, err)
		}
	}
	out, err := json.Marshal(doc)
	if err != nil {
		return nil, placeError(call, "encode input: %v", err)
	}
	return out, nil
}

// fillAt replaces the string at path in x with what fill makes of it.
func fillAt(x any, path []string, fill func(string) (string, error)) (any, error) {
	if len(path) == 0 {
		s, ok := x.(string)
		if !ok {
			return nil, errors.New("not a string")
		}
		return fill(s)
	}
	switch t := x.(type) {
	case map[string]any:
		c, ok := t[path[0]]
		if !ok {
			return nil, fmt.Errorf("no key %q", path[0])
		}
		v, err := fillAt(c, path[1:], fill)
		t[path[0]] = v
		return t, err
	case []any:
		i, err := strconv.Atoi(path[0])
		if err != nil || i < 0 || i >= len(t) || strconv.Itoa(i) != path[0] {
			return nil, fmt.Errorf("no item %q", path[0])
		}
		t[i], err = fillAt(t[i], path[1:], fill)
		return t, err
	}
	return nil, errors.New("path goes through a scalar")
}

func placeError(call history.ActivityCall, format string, args ...any) error {
	return &history.ActivityError{Category: history.CategoryInternal, Type: TypeSecretPlace, NonRetryable: true,
		Message: fmt.Sprintf("plugin %s: activity %s: ", call.Plugin, call.Activity) + fmt.Sprintf(format, args...) +
			"; the call is refused rather than a secret put anywhere else"}
}
