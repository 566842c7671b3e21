package server

import (
	"crypto/sha256"
	"sync"

	"github.com/wendflow/wend/spec"
)

// specMemo remembers the workflow texts Start has found valid, so starting the same
// workflow again does not parse and check its text once more before the engine does (for a
// long workflow a large part of each start; docs/performance.md). Only a text whose check read
// no other file is remembered: one with run_workflow steps depends on its children's files,
// which may change, so it is checked at every start.
type specMemo struct {
	mu    sync.Mutex
	valid map[[sha256.Size]byte]bool // sha256 of file name and text
	hits  int                        // checks answered from memory, for tests
}

// maxMemoSpecs bounds the memo; past it, it starts afresh (distinct texts are few: one per
// version of each workflow file).
const maxMemoSpecs = 1024

// check is spec.Loader{}.Load's diagnostics for the text, from memory when it passed before.
func (m *specMemo) check(file, source string) spec.Diagnostics {
	h := sha256.New()
	h.Write([]byte(file))
	h.Write([]byte{0})
	h.Write([]byte(source))
	var key [sha256.Size]byte
	h.Sum(key[:0])
	m.mu.Lock()
	if m.valid[key] {
		m.hits++
		m.mu.Unlock()
		return nil
	}
	m.mu.Unlock()
	readOther := false
	l := spec.Loader{ReadFile: func(name string) ([]byte, error) {
		readOther = true
		return spec.ReadWorkflowFile(name)
	}}
	_, ds := l.Load(file, []byte(source))
	if ds.HasErrors() || readOther {
		return ds
	}
	m.mu.Lock()
	if m.valid == nil || len(m.valid) >= maxMemoSpecs {
		m.valid = map[[sha256.Size]byte]bool{}
	}
	m.valid[key] = true
	m.mu.Unlock()
	return ds
}
