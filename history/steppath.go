package history

import "strings"

// StaticStepPath is a step's instance path without its for_each item numbers
// (steps[2]@1.steps[0] -> steps[2].steps[0]): the path of the step in the workflow file.
func StaticStepPath(path string) string {
	if !strings.Contains(path, "@") {
		return path
	}
	segs := strings.Split(path, ".")
	for i, s := range segs {
		segs[i], _, _ = strings.Cut(s, "@")
	}
	return strings.Join(segs, ".")
}
