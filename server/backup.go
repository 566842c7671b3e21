package server

import (
	"io"
	"net/http"
	"strconv"
)

// Backuper is a store that can write a consistent copy of itself (boltstore.Store does):
// every commit acknowledged before the call, as a database file. size, when not nil, is
// called with the copy's length before its first byte.
type Backuper interface {
	WriteBackup(w io.Writer, size func(int64)) (int64, error)
}

// backupPath is the route of a backup; the TCP listener wants the token for it, as for a
// mutation (auth.go).
const backupPath = "/v1/backup"

// BackupContentType is the media type of GET /v1/backup's answer: the database file's bytes.
const BackupContentType = "application/vnd.wend.database"

// WriteBackup writes a consistent copy of the store to w (wend backup, in the process that
// holds the database); size is as Backuper's.
func (s *Server) WriteBackup(w io.Writer, size func(int64)) (int64, error) {
	b, ok := s.store.(Backuper)
	if s.cluster != nil || !ok {
		return 0, unsupported("back up this store")
	}
	n, err := b.WriteBackup(w, size)
	if err != nil {
		return n, wrap(err)
	}
	return n, nil
}

// backup is GET /v1/backup: the copy's bytes with their length in Content-Length, so a
// copy cut short (the holder failed or stopped midway) is seen by the client as one. An
// error before the first byte is a JSON error as usual; after it the connection is aborted.
func (s *Server) backup(w http.ResponseWriter, _ *http.Request) {
	started := false
	_, err := s.WriteBackup(w, func(n int64) {
		w.Header().Set("Content-Type", BackupContentType)
		w.Header().Set("Content-Length", strconv.FormatInt(n, 10))
		w.WriteHeader(http.StatusOK)
		started = true
	})
	if err == nil {
		return
	}
	if !started {
		writeError(w, err)
		return
	}
	panic(http.ErrAbortHandler) // the client sees a body shorter than its Content-Length
}
