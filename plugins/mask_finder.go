package plugins

import "bytes"

// finder reports whether a text holds any of a set of needles, in one pass over it: a bit
// set of the needles' first two bytes (8 KiB, so it stays in cache) picks the few positions
// worth comparing. It keeps the masking of a clean output, the common case, cheap however
// many encodings there are.
type finder struct {
	pairs    [1 << 16 / 64]uint64 // bit k: a needle starts with the two bytes k
	byte1    [256]bool            // a one-byte needle is this byte
	hasByte1 bool
	by       map[uint16][][]byte // the needles of two bytes or more, by their first two
}

func newFinder(needles [][]byte) *finder {
	f := &finder{by: map[uint16][][]byte{}}
	for _, n := range needles {
		switch {
		case len(n) == 0:
		case len(n) == 1:
			f.byte1[n[0]], f.hasByte1 = true, true
		default:
			k := uint16(n[0])<<8 | uint16(n[1])
			f.pairs[k>>6] |= 1 << (k & 63)
			f.by[k] = append(f.by[k], n)
		}
	}
	return f
}

// in reports whether s holds a needle.
func (f *finder) in(s []byte) bool {
	if f.hasByte1 {
		for _, c := range s {
			if f.byte1[c] {
				return true
			}
		}
	}
	for i := 1; i < len(s); i++ {
		k := uint16(s[i-1])<<8 | uint16(s[i])
		if f.pairs[k>>6]&(1<<(k&63)) == 0 {
			continue
		}
		for _, n := range f.by[k] {
			if bytes.HasPrefix(s[i-1:], n) {
				return true
			}
		}
	}
	return false
}
