package tracing

import "strconv"

// texts keeps one copy of each short string the span builder makes: the plugin and activity
// names and the plugin build it reads from payloads, and span names. They repeat across the
// runs of a workflow, so after its first run a step's are found, not allocated again. It
// forgets all past textsMax of a kind, so it stays small whatever the runs' names. A nil
// texts keeps nothing: each string is made anew.
type texts struct {
	strs  map[string]string
	names map[nameKey]string
}

const textsMax = 4096

// nameKey is a span name's parts: a step's name, or a try's plugin, activity and attempt.
type nameKey struct {
	try     bool
	a, b    string
	attempt int
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
	k := nameKey{a: name}
	if s, ok := t.names[k]; ok {
		return s
	}
	return t.keep(k, "step "+name)
}

// tryName is a try span's name: "try PLUGIN.ACTIVITY #ATTEMPT".
func (t *texts) tryName(plugin, activity string, attempt int) string {
	k := nameKey{try: true, a: plugin, b: activity, attempt: attempt}
	if s, ok := t.names[k]; ok {
		return s
	}
	return t.keep(k, tryName(plugin, activity, attempt))
}

func (t *texts) keep(k nameKey, s string) string {
	if t.names == nil || len(t.names) >= textsMax {
		t.names = make(map[nameKey]string)
	}
	t.names[k] = s
	return s
}

// tryName is a try span's name: "try PLUGIN.ACTIVITY #ATTEMPT".
func tryName(plugin, activity string, attempt int) string {
	return "try " + plugin + "." + activity + " #" + strconv.Itoa(attempt)
}
