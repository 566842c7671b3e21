package boltstore

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"time"

	bolt "go.etcd.io/bbolt"
)

// Power-loss safety of the write-ahead log (docs/design.md, "One sync per commit").
//
// Between two checkpoints bbolt is written without sync, and a power loss may keep any subset
// of those writes. bbolt alone would then not keep its last synced state: a later transaction
// reuses the pages that state points to, and its meta page may reach the disk before its data.
// So from each checkpoint to the next:
//
//   - the pin, a read transaction opened at the checkpoint's state, keeps bbolt from reusing
//     any page of that state (bbolt frees a page only once no reader can see it);
//   - the checkpoint file, PATH.wal/checkpoint, holds a copy of that state's meta page, written
//     once the database is synced. Recovery writes it back over both meta pages before bbolt
//     opens, so bbolt starts from the checkpoint's state, intact, whatever the power loss kept
//     of the writes after it, and the log is replayed from the LSN that state holds.
//
// A commit that grows bbolt's mmap remaps it, and a remap waits for every reader, the pin too,
// which is only let go at the next checkpoint: the writer would wait for ever. So when a commit
// could reach the end of the mmap, the store first switches to synced commits: bbolt synced,
// the checkpoint file removed (bbolt's own meta pages are then the synced state), the pin let
// go; commits are bbolt's synced ones (and still logged) until the remap has happened, and the
// next checkpoint pins again.

// checkpointName is the checkpoint file, in the log folder.
const checkpointName = "checkpoint"

// checkpointMagic starts a checkpoint file (version 1 of its layout).
var checkpointMagic = []byte("wendckp1")

// metaCopy is the part of a bbolt meta page recovery writes back: the page header (16 bytes)
// and the meta (64), checksummed by bbolt.
const metaCopy = 80

// checkpointFile is magic | page size uint32 | txid uint64 | meta page head (metaCopy bytes) |
// CRC-32C of what precedes.
const checkpointFileSize = 8 + 4 + 8 + metaCopy + 4

func checkpointPath(dbPath string) string { return filepath.Join(walDir(dbPath), checkpointName) }

// saveCheckpoint writes the checkpoint file for a pinned state, given its meta page's head
// (metaHead), atomically (a temp file, synced, renamed, the folder synced). The database must
// be synced first.
func (s *Store) saveCheckpoint(head []byte) error {
	b := make([]byte, 0, checkpointFileSize)
	b = append(b, checkpointMagic...)
	b = binary.BigEndian.AppendUint32(b, uint32(s.db.Info().PageSize))
	b = append(b, head[16+48:16+56]...) // the txid, for a look
	b = append(b, head...)
	b = binary.BigEndian.AppendUint32(b, crc32.Checksum(b, castagnoli))
	dir := walDir(s.path)
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
		return fmt.Errorf("create log folder: %w", err)
	}
	tmp := checkpointPath(s.path) + ".tmp"
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return fmt.Errorf("write checkpoint: %w", err)
	}
	_, err = f.Write(b)
	if err == nil {
		err = fdatasync(f)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, checkpointPath(s.path))
	}
	if err != nil {
		return fmt.Errorf("write checkpoint: %w", err)
	}
	return syncDir(dir)
}

// metaHead reads the meta page of the state pin sees from the file. The caller is the writer,
// with no commit since pin began, so the page still holds it (bbolt writes transaction N's meta
// to page N%2, over N-2's).
func (s *Store) metaHead(pin *bolt.Tx) ([]byte, error) {
	ps := int64(s.db.Info().PageSize)
	head := make([]byte, metaCopy)
	if _, err := s.file.ReadAt(head, int64(pin.ID()%2)*ps); err != nil {
		return nil, fmt.Errorf("read meta page: %w", err)
	}
	if txid := binary.LittleEndian.Uint64(head[16+48:]); txid != uint64(pin.ID()) {
		return nil, fmt.Errorf("meta page %d holds transaction %d, want %d: %w", pin.ID()%2, txid, pin.ID(), ErrDamaged)
	}
	return head, nil
}

// removeCheckpoint removes the checkpoint file, once bbolt's own meta pages are a synced state.
func removeCheckpoint(dbPath string) error {
	os.Remove(checkpointPath(dbPath) + ".tmp") // a crash while one was written leaves it
	err := os.Remove(checkpointPath(dbPath))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("remove checkpoint: %w", err)
	}
	return syncDir(walDir(dbPath))
}

// restoreCheckpoint writes the checkpoint file's meta page back over both of the database's meta
// pages, before bbolt opens it, and reports whether there was one. The file is not synced: the
// checkpoint file stays, and a crash before the next checkpoint restores it again.
func restoreCheckpoint(dbPath string) (bool, error) {
	if _, err := os.Stat(checkpointPath(dbPath)); errors.Is(err, os.ErrNotExist) {
		return false, nil // the common case, without a lock
	}
	f, err := os.OpenFile(dbPath, os.O_RDWR, 0)
	if err != nil {
		return false, fmt.Errorf("restore checkpoint: %w", err)
	}
	defer f.Close() // and with it the lock, before bbolt takes it
	// Under bbolt's lock: the meta pages of a database another process holds must not be
	// rewritten, and the checkpoint is read only now, since the last holder may have replaced
	// or removed it (a copy read before would rewind the file to pages reused since).
	for deadline := time.Now().Add(lockTimeout); !tryLock(f); {
		if time.Now().After(deadline) {
			return false, inUse(dbPath)
		}
		time.Sleep(50 * time.Millisecond)
	}
	b, err := os.ReadFile(checkpointPath(dbPath))
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("read checkpoint: %w", err)
	}
	if len(b) != checkpointFileSize || !bytes.Equal(b[:8], checkpointMagic) ||
		crc32.Checksum(b[:len(b)-4], castagnoli) != binary.BigEndian.Uint32(b[len(b)-4:]) {
		return false, fmt.Errorf("checkpoint %s: not a checkpoint or damaged: %w", checkpointPath(dbPath), ErrDamaged)
	}
	ps := int64(binary.BigEndian.Uint32(b[8:]))
	head := b[20 : 20+metaCopy]
	for page := range int64(2) {
		p := bytes.Clone(head)
		binary.LittleEndian.PutUint64(p[0:], uint64(page)) // the page header's id
		if _, err := f.WriteAt(p, page*ps); err != nil {
			return false, fmt.Errorf("restore checkpoint: %w", err)
		}
	}
	return true, nil
}

// checkpointNow makes the current state the checkpoint, synchronously: pinned, synced, its meta
// page saved; the old pin is let go. Only the writer (or Open, before it starts) calls it.
func (s *Store) checkpointNow() error {
	pin, err := s.db.Begin(false)
	if err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	head, err := s.metaHead(pin)
	if err != nil {
		pin.Rollback()
		return fmt.Errorf("checkpoint: %w", err)
	}
	testHookSync()
	if err := s.db.Sync(); err != nil {
		pin.Rollback()
		return fmt.Errorf("checkpoint: sync database: %w", err)
	}
	if err := s.saveCheckpoint(head); err != nil {
		pin.Rollback()
		return fmt.Errorf("checkpoint: %w", err)
	}
	s.setPin(pin)
	s.ckptTxid = uint64(pin.ID())
	s.db.NoSync = true
	return nil
}

// setPin replaces the pin; the caller holds pinMu or is the only goroutine at work.
func (s *Store) setPin(pin *bolt.Tx) {
	if s.pin != nil {
		s.pin.Rollback()
	}
	s.pin = pin
}

// toSynced switches to bbolt's synced commits: bbolt synced, the checkpoint file removed (the
// synced state is bbolt's own now), every pin let go, so a commit may remap.
func (s *Store) toSynced() error {
	s.pinMu.Lock()
	defer s.pinMu.Unlock()
	if s.ckpt != nil {
		s.ckpt.unpin()
	}
	testHookSync()
	if err := s.db.Sync(); err != nil {
		return fmt.Errorf("sync database: %w", err)
	}
	if err := removeCheckpoint(s.path); err != nil {
		return err
	}
	s.setPin(nil)
	s.db.NoSync = false
	return nil
}

// toUnsynced leaves synced commits: the last (synced) state becomes the checkpoint.
func (s *Store) toUnsynced() error {
	s.pinMu.Lock()
	defer s.pinMu.Unlock()
	return s.checkpointNow()
}

// beforeCommit runs in the writer, tx open with its writes, before tx commits. It keeps a lower
// bound of bbolt's mmap size and chooses the commit's mode: synced when the commit could reach
// the end of the mmap (and remap), else unsynced under the pin. n is the bytes the commit puts.
func (s *Store) beforeCommit(tx *bolt.Tx, n int) error {
	if !s.unsynced {
		return nil
	}
	ps := s.pageSize
	hw := tx.Size() // nothing is allocated before commit: the committed high water
	s.mmapLow = max(s.mmapLow, mmapSize(hw+ps))
	s.maxPut = max(s.maxPut, int64(n))
	near := hw+s.mmapLow/8+4*int64(n)+2*s.maxPut+16*ps >= s.mmapLow
	switch {
	case near && s.db.NoSync:
		return s.toSynced()
	case !near && !s.db.NoSync:
		return s.toUnsynced()
	}
	return nil
}

// mmapSize is bbolt's mmap size for a file of size bytes (bolt.DB.mmapSize, v1.5): powers of two
// from 32 KiB to 1 GiB, then whole GiB. Since bbolt maps at least its high water mark plus a
// page, mmapSize(high water + page) is a lower bound of the size it has mapped.
func mmapSize(size int64) int64 {
	for i := uint(15); i <= 30; i++ {
		if size <= 1<<i {
			return 1 << i
		}
	}
	const step = 1 << 30
	if r := size % step; r > 0 {
		size += step - r
	}
	return size
}
