package spec

import (
	"errors"
	"fmt"
	"slices"
)

// MaxDataDepth bounds how deep arrays and objects nest in data a client hands wend: a run's
// input, a signal's data, a test file's mock outputs. It is checked where the data enters,
// before any schema runs: a schema's validation time grows with the data's depth, and no
// real payload nests this deep.
const MaxDataDepth = 64

// ErrDataTooDeep is returned by CheckJSONDepth and CheckDataDepth for data whose arrays and
// objects nest deeper than MaxDataDepth.
var ErrDataTooDeep = errors.New("data nested too deep")

// CheckJSONDepth refuses JSON text whose arrays and objects nest deeper than MaxDataDepth,
// naming what the text is ("input", "signal data"). It scans bytes without decoding, so it
// costs one pass however the text is shaped; text that is not JSON is left to the decoder.
func CheckJSONDepth(what string, raw []byte) error {
	depth, inString, escaped := 0, false, false
	for i, b := range raw {
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case b == '\\':
				escaped = true
			case b == '"':
				inString = false
			}
		case b == '"':
			inString = true
		case b == '[' || b == '{':
			depth++
			if depth > MaxDataDepth {
				return depthError(what, fmt.Sprintf("at byte %d", i))
			}
		case b == ']' || b == '}':
			depth--
		}
	}
	return nil
}

// CheckDataDepth is CheckJSONDepth for a decoded JSON value (map[string]any, []any, scalars).
// It walks at most MaxDataDepth+1 levels down, so a deeper value costs no more than that.
func CheckDataDepth(what string, v any) error {
	if path, deep := tooDeep(v, what, 0); deep {
		if len(path) > 200 {
			path = path[:200] + "..."
		}
		return depthError(what, "at "+path)
	}
	return nil
}

func tooDeep(v any, path string, depth int) (string, bool) {
	switch v := v.(type) {
	case map[string]any:
		if depth++; depth > MaxDataDepth {
			return path, true
		}
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		slices.Sort(keys) // the same value names the same path each time
		for _, k := range keys {
			if p, deep := tooDeep(v[k], path+"."+k, depth); deep {
				return p, true
			}
		}
	case []any:
		if depth++; depth > MaxDataDepth {
			return path, true
		}
		for i, item := range v {
			if p, deep := tooDeep(item, fmt.Sprintf("%s[%d]", path, i), depth); deep {
				return p, true
			}
		}
	}
	return "", false
}

func depthError(what, where string) error {
	return fmt.Errorf("the %s nests arrays and objects deeper than %d levels (%s): %w", what, MaxDataDepth, where, ErrDataTooDeep)
}
