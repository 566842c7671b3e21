package runview

import "github.com/wendflow/wend/spec"

// LeafStep is a leaf row of a run's step tree (Steps): what a reader that counts the rows
// from the step instances' statuses needs of the spec, without loading it per run.
type LeafStep struct {
	Path, Kind string
	Catch      bool // a failure of the step runs its catch: its row then reads caught
}

// SpecLeaves loads spec text as SpecOf does and lists its leaf steps in the order Steps lays
// their rows out, and whether it waits for signals (an open run's Steps then needs Live);
// ok is false when the text does not load (Steps is then nil).
func SpecLeaves(file, source string) (leaves []LeafStep, signals, ok bool) {
	return leavesOf(loadSpec(file, source))
}

// Leaves is SpecLeaves of a text loaded through c: the text is parsed once for both its
// leaves and the views that use c.
func (c *Specs) Leaves(file, source string) (leaves []LeafStep, signals, ok bool) {
	return leavesOf(c.load(file, source))
}

func leavesOf(w *spec.Workflow) (leaves []LeafStep, signals, ok bool) {
	if w == nil {
		return nil, false, false
	}
	var add func([]*spec.Step)
	add = func(steps []*spec.Step) {
		for _, s := range steps {
			if LeafKind(s.Kind) {
				leaves = append(leaves, LeafStep{Path: s.Path, Kind: string(s.Kind), Catch: len(s.Catch) > 0})
			}
			for _, group := range [][]*spec.Step{s.Steps, s.Parallel, s.Catch, s.CompensateWith} {
				add(group)
			}
		}
	}
	add(w.Steps)
	add(w.OnCancel)
	return leaves, len(signalNames(w)) > 0, true
}
