package interpreter

import (
	"iter"
	"slices"
)

// table is a map by string that holds its first entries in a slice. Most of a run's maps hold
// one or two entries at a time (a waiting run's timer, its signal's waiters, the outputs of
// its steps), and Go's smallest map is a group of eight slots, several hundred bytes; a
// waiting run in memory is mostly such maps. Past tableFew entries it moves to a map, so
// lookups stay constant-time in a run with many at once. The zero table is empty.
type table[V any] struct {
	few  []tableEntry[V] // while many is nil
	many map[string]V
}

type tableEntry[V any] struct {
	k string
	v V
}

// tableFew is how many entries a table keeps in its slice: a scan of eight strings costs less
// than hashing one.
const tableFew = 8

func (t *table[V]) get(k string) (V, bool) {
	if t.many != nil {
		v, ok := t.many[k]
		return v, ok
	}
	for i := range t.few {
		if t.few[i].k == k {
			return t.few[i].v, true
		}
	}
	var zero V
	return zero, false
}

// at is the entry for k, the zero value if there is none.
func (t *table[V]) at(k string) V {
	v, _ := t.get(k)
	return v
}

func (t *table[V]) set(k string, v V) {
	if t.many != nil {
		t.many[k] = v
		return
	}
	for i := range t.few {
		if t.few[i].k == k {
			t.few[i].v = v
			return
		}
	}
	if len(t.few) < tableFew {
		t.few = append(t.few, tableEntry[V]{k, v})
		return
	}
	t.many = make(map[string]V, 2*tableFew)
	for _, e := range t.few {
		t.many[e.k] = e.v
	}
	t.many[k] = v
	t.few = nil
}

// del removes k's entry. A table emptied from a map drops it; its slice is kept for the next
// entries (a run's activities come and go one a step).
func (t *table[V]) del(k string) {
	if t.many != nil {
		delete(t.many, k)
		if len(t.many) == 0 {
			t.many = nil
		}
		return
	}
	for i := range t.few {
		if t.few[i].k == k {
			t.few = slices.Delete(t.few, i, i+1)
			return
		}
	}
}

func (t *table[V]) len() int {
	if t.many != nil {
		return len(t.many)
	}
	return len(t.few)
}

// all yields the entries: in the order they were set while few, in a map's order after.
// Callers needing an order sort.
func (t *table[V]) all() iter.Seq2[string, V] {
	return func(yield func(string, V) bool) {
		if t.many != nil {
			for k, v := range t.many {
				if !yield(k, v) {
					return
				}
			}
			return
		}
		for _, e := range t.few {
			if !yield(e.k, e.v) {
				return
			}
		}
	}
}
