package spec

import (
	"slices"
	"strconv"
)

// SecretFill is one place where the plugin host puts a secret's value: the reference to
// secret Name that the workflow's template wrote at byte Offset of the string at Path
// (object keys and list indices, from the top of the evaluated `with`). Only a template's
// own `${{ secrets.NAME }}` part makes a fill; text that merely looks like one (from input,
// a signal, state or an output) is data and makes none.
type SecretFill struct {
	Path   []string
	Name   string
	Offset int
}

// EvalFills is Eval that also returns where each secret reference of v's templates landed
// in the result, in file order; nil when v names no secret.
func (v *Value) EvalFills(env map[string]any) (any, []SecretFill, error) {
	if !v.hasSecrets() {
		x, err := v.eval(env, nil)
		return x, nil, err
	}
	f := &fills{}
	x, err := v.eval(env, f)
	if err != nil {
		return nil, nil, err
	}
	return x, f.out, nil
}

// hasSecrets reports whether v names a secret, worked out once: EvalFills runs on every
// activity start, and most `with`s name none.
func (v *Value) hasSecrets() bool {
	if v == nil {
		return false
	}
	v.secretsOnce.Do(func() { v.named = len(v.Secrets()) > 0 })
	return v.named
}

// fills tracks the path of the value being evaluated and the references met on the way;
// a nil *fills tracks nothing, so Eval pays for none of it.
type fills struct {
	path []string
	out  []SecretFill
}

func (f *fills) enter(key string) {
	if f != nil {
		f.path = append(f.path, key)
	}
}

func (f *fills) enterIndex(i int) {
	if f != nil {
		f.path = append(f.path, strconv.Itoa(i))
	}
}

func (f *fills) leave() {
	if f != nil {
		f.path = f.path[:len(f.path)-1]
	}
}

func (f *fills) at(name string, offset int) {
	if f != nil {
		f.out = append(f.out, SecretFill{Path: slices.Clone(f.path), Name: name, Offset: offset})
	}
}
