package runview

import (
	"strconv"
	"strings"
)

// StepName names the step at path for a person. Events carry positional paths (Event.Step):
// steps[3].parallel[1].steps[1], with a for_each item's number after @ (steps[1]@0.steps[0]);
// those stay for machines (--json, the export). ids maps a static path (no @N) to the id its
// step has in the spec (nil when the spec is unknown).
//
// A step with an id is named by it alone, ids being unique in a file, but the for_each items
// on the way are kept (the same id runs once per item); other steps by their place, counted
// from 1 as a person counts: steps[3].parallel[1].steps[1] under a parallel with id ship is
// "ship › branch 2 › step 2", and the body of for_each pack's first item "pack[0] › step 1"
// (the item number is the `index` the body sees).
func StepName(path string, ids map[string]string) string {
	if path == "" {
		return ""
	}
	var parts []string
	keep := 0 // parts up to here hold item numbers: an inner id does not replace them
	var static strings.Builder
	for i, seg := range strings.Split(path, ".") {
		name, item, hasItem := strings.Cut(seg, "@")
		if i > 0 {
			static.WriteByte('.')
		}
		static.WriteString(name)
		if id := ids[static.String()]; id != "" {
			parts = append(parts[:keep], id)
		} else {
			parts = append(parts, placeName(name))
		}
		if hasItem {
			parts[len(parts)-1] += "[" + item + "]"
			keep = len(parts)
		}
	}
	return strings.Join(parts, " › ")
}

// placeWords name a step list's items: steps[1] is "step 2", parallel[1] "branch 2";
// others keep their key (catch 1, compensate_with 2, on_cancel 1).
var placeWords = map[string]string{"steps": "step", "parallel": "branch"}

// placeName is one path segment as a person reads it; a segment it does not know stays as is.
func placeName(seg string) string {
	key, idx, ok := strings.Cut(seg, "[")
	if !ok || !strings.HasSuffix(idx, "]") {
		return seg
	}
	n, err := strconv.Atoi(idx[:len(idx)-1])
	if err != nil || n < 0 || n == int(^uint(0)>>1) {
		return seg
	}
	word := placeWords[key]
	if word == "" {
		word = key
	}
	return word + " " + strconv.Itoa(n+1)
}

// TimerName names a timer for a person. A timer's id is the path of the step that set it (a
// delay), that path and "#timeout" (a wait's timeout), or "workflow#run_timeout" and the like
// (the run's deadlines): the path part is named by name, as steps are.
func TimerName(id string, name func(path string) string) string {
	path, rest, hash := strings.Cut(id, "#")
	n := name(path)
	if n == "" {
		n = path
	}
	if hash {
		return n + "#" + rest
	}
	return n
}
