package boltstore

import (
	"fmt"
	"os"
)

// plainLog is the floor of a commit with the write-ahead log in the benchmarks: a file appended
// to and synced once per record as the log syncs its segments (fdatasync), with nothing else
// around it. (go run ./bench has its own, with a preallocated variant.)
type plainLog struct {
	f    *os.File
	size int64
}

func openPlainLog(path string) (*plainLog, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, fmt.Errorf("plain log: %w", err)
	}
	return &plainLog{f: f}, nil
}

// Append writes val at the end of what was written and syncs it.
func (p *plainLog) Append(val []byte) error {
	if _, err := p.f.WriteAt(val, p.size); err != nil {
		return fmt.Errorf("plain log: %w", err)
	}
	if err := fdatasync(p.f); err != nil {
		return fmt.Errorf("plain log: %w", err)
	}
	p.size += int64(len(val))
	return nil
}

func (p *plainLog) Close() error { return p.f.Close() }
