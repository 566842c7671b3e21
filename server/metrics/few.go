package metrics

// few is a map by string for the few entries a run's tally mostly has (its pending timers,
// its steps): a slice searched in order, which takes a tenth of a map's bytes, and a map
// once it has more than fewMax entries.
type few[V any] struct {
	keys []string
	vals []V
	m    map[string]V
}

const fewMax = 8

func (f *few[V]) get(k string) (V, bool) {
	if f.m != nil {
		v, ok := f.m[k]
		return v, ok
	}
	for i, x := range f.keys {
		if x == k {
			return f.vals[i], true
		}
	}
	var zero V
	return zero, false
}

func (f *few[V]) set(k string, v V) {
	if f.m != nil {
		f.m[k] = v
		return
	}
	for i, x := range f.keys {
		if x == k {
			f.vals[i] = v
			return
		}
	}
	if len(f.keys) < fewMax {
		f.keys, f.vals = append(f.keys, k), append(f.vals, v)
		return
	}
	f.m = make(map[string]V, 2*fewMax)
	for i, x := range f.keys {
		f.m[x] = f.vals[i]
	}
	f.m[k] = v
	f.keys, f.vals = nil, nil
}

func (f *few[V]) del(k string) {
	if f.m != nil {
		delete(f.m, k)
		return
	}
	for i, x := range f.keys {
		if x == k {
			last := len(f.keys) - 1
			f.keys[i], f.vals[i] = f.keys[last], f.vals[last]
			var zero V
			f.keys[last], f.vals[last] = "", zero
			f.keys, f.vals = f.keys[:last], f.vals[:last]
			return
		}
	}
}
