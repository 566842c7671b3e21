package spec

import "strings"

// nameSteps gives the findings of file whose path runs through a step with an id their Name:
// the path from the innermost such step, by its id ("charge.retry.tries"). An id two steps
// share, or one with a finding of its own, names nothing: it would point at the wrong step.
func nameSteps(ds Diagnostics, file string, w *Workflow) {
	ids := map[string]string{} // static path -> id
	seen := map[string]int{}
	w.Walk(func(s *Step) {
		if s.ID != "" {
			ids[s.Path] = s.ID
			seen[s.ID]++
		}
	})
	for i := range ds {
		if ds[i].File == file && strings.HasSuffix(ds[i].Path, ".id") {
			delete(ids, strings.TrimSuffix(ds[i].Path, ".id"))
		}
	}
	for i := range ds {
		d := &ds[i]
		if d.File != file || d.Path == "" {
			continue
		}
		// The innermost step with a usable id: the longest prefix that ends at a segment.
		for end := len(d.Path); end > 0; end = strings.LastIndexByte(d.Path[:end], '.') {
			if id, ok := ids[d.Path[:end]]; ok && seen[id] == 1 {
				d.Name = id + d.Path[end:]
				break
			}
			if strings.LastIndexByte(d.Path[:end], '.') < 0 {
				break
			}
		}
	}
}
