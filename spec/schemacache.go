package spec

import (
	"crypto/sha256"
	"sync"
)

// schemaPassed remembers documents that passed the workflow schema, by the sha256 of their
// bytes, so that starting many runs of one workflow checks its schema once: the check is most
// of loading a small spec (docs/performance.md), and its outcome depends on the bytes alone.
// Only passes are kept; a failing document is checked every time, so its diagnostics always
// name the file at hand.
var schemaPassed = &passSet{max: 1024}

type passSet struct {
	mu  sync.Mutex
	max int
	m   map[[sha256.Size]byte]struct{}
}

func (s *passSet) has(k [sha256.Size]byte) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.m[k]
	return ok
}

func (s *passSet) add(k [sha256.Size]byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil || len(s.m) >= s.max {
		s.m = map[[sha256.Size]byte]struct{}{} // bounded: start over rather than grow
	}
	s.m[k] = struct{}{}
}
