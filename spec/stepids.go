package spec

// StepIDs maps the path of every step that has an id to that id: what a person reading a
// positional path (steps[2].parallel[0]) needs to name the step (runview.StepName).
func (w *Workflow) StepIDs() map[string]string {
	ids := map[string]string{}
	if w == nil {
		return ids
	}
	w.Walk(func(s *Step) {
		if s.ID != "" {
			ids[s.Path] = s.ID
		}
	})
	return ids
}
