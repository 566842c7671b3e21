package tracing

import "strconv"

// texts keeps one copy of each short string the span builder makes: the plugin and activity
// names and the plugin build it reads from payloads, and span names. They repeat across the
// runs of a workflow, so after its first run a step's are found, not allocated again. It
// forgets all past textsMax of a kind, so it stays small whatever the runs' names. A nil
// texts keeps nothing: each string is made anew.
type texts struct {
	strs  map[string]string
	steps map[string]string // step span names by step name
	tries map[tryKey]string // try span names
	// lastTry is the try span name made or found last: a workflow's steps mostly call one
	// activity, so the next try's is most often the same (its strings the same kept copies).
	lastTry     tryKey
	lastTryName string
}

const textsMax = 4096

// tryKey is a try span name's parts.
type tryKey struct {
	plugin, activity string
	attempt          int
}

// of is the string of b.
func (t *texts) of(b []byte) string {
	if t == nil {
		return string(b)
	}
	if s, ok := t.strs[string(b)]; ok {
		return s
	}
	if t.strs == nil || len(t.strs) >= textsMax {
		t.strs = make(map[string]string)
	}
	s := string(b)
	t.strs[s] = s
	return s
}

// stepName is a step span's name: "step NAME".
func (t *texts) stepName(name string) string {
	if s, ok := t.steps[name]; ok {
		return s
	}
	if t.steps == nil || len(t.steps) >= textsMax {
		t.steps = make(map[string]string)
	}
	s := "step " + name
	t.steps[name] = s
	return s
}

// tryName is a try span's name: "try PLUGIN.ACTIVITY #ATTEMPT".
func (t *texts) tryName(plugin, activity string, attempt int) string {
	k := tryKey{plugin, activity, attempt}
	if k == t.lastTry && t.lastTryName != "" {
		return t.lastTryName
	}
	s, ok := t.tries[k]
	if !ok {
		if t.tries == nil || len(t.tries) >= textsMax {
			t.tries = make(map[tryKey]string)
		}
		s = tryName(plugin, activity, attempt)
		t.tries[k] = s
	}
	t.lastTry, t.lastTryName = k, s
	return s
}

// tryName is a try span's name: "try PLUGIN.ACTIVITY #ATTEMPT".
func tryName(plugin, activity string, attempt int) string {
	return "try " + plugin + "." + activity + " #" + strconv.Itoa(attempt)
}
