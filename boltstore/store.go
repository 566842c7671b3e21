package boltstore

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"

	"github.com/wendflow/wend/history"
)

// Errors of the store.
var (
	// ErrInUse is wrapped by Open's error when another process holds the database.
	ErrInUse = errors.New("database in use")
	// ErrNotWend is returned by Open for a bbolt file without wend's buckets or of a newer schema.
	ErrNotWend = errors.New("not a wend database")
	// ErrNetworkFS is returned by Open for a path on a network file system, where bbolt's file
	// lock may hang or not exclude the other host.
	ErrNetworkFS = errors.New("database on a network file system")
	// ErrDamaged is wrapped by the error of Open or of a read when the file's pages are corrupt
	// (a torn write, rot): bbolt panicked or faulted on them, or a bucket's keys are out of order;
	// and by Open's error when the write-ahead log is damaged other than in its torn last record.
	ErrDamaged = errors.New("database is damaged")
	// ErrLogRemoved stops a running store whose log segment was deleted or replaced from
	// outside (its folder removed): the commit being made is not acknowledged, none after it is.
	// The database holds every commit acknowledged before; restart to start a new log.
	// ErrLogMissing is wrapped by Open's error for a database that was not closed cleanly and
	// whose write-ahead log is missing or another's (logid.go); Options.AcceptLogLoss opens it.
	ErrLogMissing = errors.New("write-ahead log missing")
	// ErrLogDamaged is wrapped by Open's error for a database whose write-ahead log is damaged
	// (a segment missing, cut short, a record damaged before others: walcheck.go), and with it
	// ErrDamaged; Options.AcceptLogLoss opens it with the records before the damage.
	ErrLogDamaged = errors.New("write-ahead log damaged")
	ErrLogRemoved = errors.New("the write-ahead log was removed from outside while the store ran; commits are not durable: restart to start a new log")
)

// DefaultInitialMmapSize is the mmap reserved at open. A commit that outgrows the mmap remaps it,
// and the remap waits for every open read transaction (bbolt#854). One run's history may hold
// 50 MB of payloads, and while any reader is open the pages commits free are not reused, so the
// file grows faster than the history: with a small reservation a commit waits for the reader
// (docs/reliability.md A8; the wait measured is in docs/performance.md). A reservation costs
// address space only: the file is not extended to it on Linux, and pages past the file are never
// touched. etcd reserves 10 GiB for the same reason.
const DefaultInitialMmapSize = 1 << 30

// lockTimeout bounds the wait for another process's lock (docs/reliability.md A7: fail at once,
// not hang).
const lockTimeout = time.Second

// Options tune Open. The zero value is the production setting.
type Options struct {
	// InitialMmapSize is the mmap size reserved at open; 0 means DefaultInitialMmapSize.
	InitialMmapSize int
	// MaxSize caps the data file; a commit that would grow it further fails, and that failure
	// is fatal like any commit error. 0 means no cap.
	MaxSize int
	// MaxBatch caps how many queued commits share one bbolt transaction; 0 means 1024.
	MaxBatch int
	// AllowNetworkFS skips the refusal of a path on a network file system (NFS, SMB and the
	// like; a network share or mapped drive on Windows).
	AllowNetworkFS bool
	// NoLog turns the write-ahead log off: every commit is then bbolt's synced commit (two
	// syncs) instead of one synced append to PATH.wal, with bbolt committed only at
	// checkpoints (wal.go, checkpoint.go; docs/design.md, "One sync per commit").
	// The environment variable WEND_STORE_LOG=0 turns it off for every Open of the process,
	// WEND_STORE_LOG=1 on. A log left by a crash is replayed at Open either way.
	NoLog bool
	// AcceptLogLoss opens a database that was not closed cleanly although its log is missing,
	// not its own or damaged, without the commits only that log held (the environment variable
	// WEND_ACCEPT_LOG_LOSS=1 sets it for every Open of the process). Back the file up first.
	AcceptLogLoss bool
	// ReadOnly opens an existing database for reading only, writing nothing anywhere, so that
	// it opens on a full disk (reading.go); its writes fail with ErrReadOnly.
	ReadOnly bool
	// LogSegmentSize is the log's segment size (DefaultLogSegmentSize when 0): the log past it
	// is checkpointed.
	LogSegmentSize int64
	// UpgradeProgress, when set, is called after each transaction of an upgrade of the file's
	// layout that Open runs (upgrade.go), for a caller to show how far it is.
	UpgradeProgress func(UpgradeProgress)
}

// logFromEnv is the switch that turns the log off (0) or on (1) under any caller (the CLI,
// the crash suites).
const logFromEnv = "WEND_STORE_LOG"

// Store is a history.Store on bbolt. Its methods are safe for concurrent use.
type Store struct {
	db      *bolt.DB
	path    string
	pidPath string

	w        *writer // nil when readOnly
	readOnly bool    // Options.ReadOnly

	fatalMu sync.Mutex
	fatal   error // the first failed commit; sticky

	closed    atomic.Bool
	closeOnce sync.Once
	closeErr  error

	// holdCheckpoints, set by tests, keeps the writer from checkpointing: the log rolls on,
	// bbolt's transaction stays open, as a crash before a checkpoint leaves them.
	holdCheckpoints bool

	// failCommit, set by tests before the first commit, makes the writer's transaction fail
	// with its error instead of committing (an fsync failure, as far as the store can tell).
	failCommit func() error

	log        *wal        // nil with Options.NoLog
	logBuf     []byte      // the writer's record payload, reused
	logPs      []*prepared // the commits logBatch encodes, reused
	closedSegs []string    // log segments closed since the last checkpoint, removed by the next

	// bbolt's write transaction left open between checkpoints (opentx.go); writeMu guards it,
	// and is held by the writer's batches, by reads while it is open, and by PutScheduleStates.
	writeMu sync.Mutex
	open    openTx
	openMax int         // the most batches it holds: openBatchesMax
	hasOpen atomic.Bool // open.tx is set

	commits  atomic.Uint64 // commits written
	txs      atomic.Uint64 // batches written, each one durable write
	boltTxs  atomic.Uint64 // bbolt write transactions committed
	rejected atomic.Uint64 // commits refused by validation

	checkpoints atomic.Uint64 // checkpoints made, for tests

}

var _ history.Store = (*Store)(nil)

// refuseEmpty refuses a database file of 0 bytes: wend creates its file whole under a
// temporary name and renames it into place, so an empty one was made by something else
// (touch, a failed copy) and holds no runs.
func refuseEmpty(path string) error {
	st, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("open database: %w", err)
	}
	if !st.Mode().IsRegular() {
		return fmt.Errorf("open database: %s is not a regular file; give the path of a wend database (a new one is created there when nothing is)", path)
	}
	if st.Size() == 0 {
		return fmt.Errorf("open database: %s is empty (0 bytes), not a wend database: wend writes its file whole before it uses it, so something else made this one; if it is not needed, delete it and wend creates a new database there", path)
	}
	return nil
}

// Open opens the database at path, creating it (and its folder, 0700) when missing.
func Open(path string, opts Options) (*Store, error) {
	if opts.InitialMmapSize <= 0 {
		opts.InitialMmapSize = DefaultInitialMmapSize
	}
	if opts.MaxBatch <= 0 {
		opts.MaxBatch = 1024
	}
	switch os.Getenv(logFromEnv) {
	case "0":
		opts.NoLog = true
	case "1":
		opts.NoLog = false
	}
	if os.Getenv(acceptLogLossEnv) == "1" {
		opts.AcceptLogLoss = true
	}
	if opts.LogSegmentSize <= 0 {
		opts.LogSegmentSize = DefaultLogSegmentSize
	}
	if !opts.AllowNetworkFS {
		if fs, ok := networkFS(filepath.Dir(path)); ok {
			return nil, fmt.Errorf("open database: %s is on %s: %w", path, fs, ErrNetworkFS)
		}
	}
	if opts.ReadOnly {
		s, err := openReading(path, opts)
		if !errors.Is(err, errLogLossToRecord) {
			return s, err
		}
		opts.ReadOnly = false // accepting a lost log is recorded: a write
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("open database: %w", err)
	}
	if err := createOrClean(path, opts); err != nil {
		return nil, fmt.Errorf("open database: %w", err)
	}
	if err := refuseEmpty(path); err != nil {
		return nil, err
	}
	db, err := openChecked(path, opts)
	for i := 0; errors.Is(err, errReplaced) && i < 3; i++ {
		db, err = openChecked(path, opts) // the new file a compaction made; open that one
	}
	if errors.Is(err, berrors.ErrTimeout) {
		return nil, fmt.Errorf("open database: %w", inUse(path))
	}
	if err != nil {
		return nil, fmt.Errorf("open database %s: %w", path, err)
	}
	s := &Store{db: db, path: path, pidPath: path + ".pid", openMax: openBatchesMax}
	if err := s.init(opts); err != nil {
		err = s.diskFull(err)
		db.Close()
		return nil, fmt.Errorf("open database %s: %w", path, err)
	}
	if err := s.startLog(opts); err != nil {
		err = s.diskFull(err)
		db.Close()
		return nil, fmt.Errorf("open database %s: %w", path, err)
	}
	s.w = startWriter(s, opts.MaxBatch)
	return s, nil
}

// boltOptions are the settings docs/reliability.md A10 pins. create is true for the temp
// file of a new database, which bbolt must be allowed to create.
func boltOptions(opts Options, create bool) *bolt.Options {
	o := &bolt.Options{
		Timeout:         lockTimeout,
		NoSync:          false, // never: a commit is durable when it returns
		NoFreelistSync:  true,  // smaller commits; the freelist is rebuilt at open
		FreelistType:    bolt.FreelistMapType,
		InitialMmapSize: opts.InitialMmapSize,
		MaxSize:         opts.MaxSize,
	}
	if !create {
		// The file exists (createIfMissing made it); if it vanished meanwhile, fail rather than
		// let bbolt initialise a file in place, which can tear (etcd#16596).
		o.OpenFile = func(name string, flag int, perm os.FileMode) (*os.File, error) {
			return os.OpenFile(name, flag&^os.O_CREATE, perm)
		}
	}
	return o
}

// init checks the file is ours, cleans a crashed compaction's file and records our pid.
func (s *Store) init(opts Options) error {
	if s.db.NoSync {
		return errors.New("bbolt NoSync is set; refusing to run without durable commits")
	}
	if err := guard(func() error { return s.db.View(checkSchema) }); err != nil {
		return err
	}
	// First, so that a process waiting for the lock tells this writer from a reader (inUse).
	pid := fmt.Appendf(nil, "%d\n", os.Getpid())
	if err := testFailWrite("pid file"); err != nil {
		return fmt.Errorf("write pid file: %w", err)
	}
	if err := os.WriteFile(s.pidPath, pid, 0o600); err != nil {
		return fmt.Errorf("write pid file: %w", err)
	}
	// Before the log's replay, whose records then keep them as commits do (counts.go).
	if !hasReadIndexes(s.db) {
		if err := s.db.Update(buildReadIndexes); err != nil {
			return fmt.Errorf("build the run counts and started index: %w", err)
		}
		testHookSync()
	}
	unsorted, noFeed := false, false
	_ = s.db.View(func(tx *bolt.Tx) error {
		unsorted = tx.Bucket(bucketSearchUnsorted) != nil && tx.Bucket(bucketSearch) == nil
		noFeed = tx.Bucket(bucketChanges) == nil
		return nil
	})
	if noFeed {
		if err := s.db.Update(buildChangeFeed); err != nil {
			return fmt.Errorf("add the change feed: %w", err)
		}
		testHookSync()
	}
	if unsorted {
		if err := s.db.Update(buildSearchIndex); err != nil {
			return fmt.Errorf("build the search index: %w", err)
		}
		testHookSync()
	}
	// Before the log's replay too, whose commits then put events where schema 2 keeps them.
	if err := s.upgradeEvents(opts.UpgradeProgress); err != nil {
		return err
	}
	// We hold the lock, so no compaction is running: its file is a crash's leftover.
	os.Remove(s.path + compactSuffix)
	return nil
}

// startLog replays what a log left (always) and, unless opts.NoLog, starts a new one in front of
// bbolt, whose transactions are then committed only at checkpoints.
func (s *Store) startLog(opts Options) error {
	id, err := s.checkLogPresent(opts.AcceptLogLoss)
	if err != nil {
		return err
	}
	next, err := s.replayLog(opts.AcceptLogLoss)
	if err != nil {
		return err
	}
	if opts.NoLog {
		if id, err := s.storedLogID(); err != nil || id == nil {
			return err
		}
		// bbolt is synced with every record: no log stands in front of it any more.
		if err := s.db.Update(unmarkLog); err != nil {
			return err
		}
		testHookSync()
		return removeLog(walDir(s.path), []string{filepath.Join(walDir(s.path), logIDName)})
	}
	if s.log, err = openWAL(walDir(s.path), next, opts.LogSegmentSize); err != nil {
		return err
	}
	// The id is in the log folder, then in bbolt (synced), before any commit is acknowledged.
	if err := s.markLog(id); err != nil {
		s.log.close()
		return err
	}
	return nil
}

// closeLog ends the log at Close, after the last checkpoint: unless the store failed, the log
// is removed, so a closed database is a plain bbolt file. After a failure the log stays, for
// the next Open.
func (s *Store) closeLog() error {
	if s.log == nil {
		return nil
	}
	err := s.log.close()
	if s.Err() != nil {
		return err
	}
	// In a transaction of its own, so that both of bbolt's meta pages are without it
	// (metaTwice).
	if err := s.db.Update(unmarkLog); err != nil {
		return fmt.Errorf("close database: %w", err)
	}
	if err := s.metaTwice(); err != nil {
		return err
	}
	testHookSync()
	names, err := segments(s.log.dir)
	if err == nil {
		err = removeLog(s.log.dir, append(names, filepath.Join(s.log.dir, recycledName), filepath.Join(s.log.dir, logIDName)))
	}
	return err
}

// metaTwice commits one more transaction, which writes the log's LSN again, so that both of
// bbolt's meta pages describe every commit: the last transaction may hold several batches
// (opentx.go), and a newest meta page found damaged after Close (docs/reliability.md A2) falls
// back to the other one with none of them lost.
func (s *Store) metaTwice() error {
	err := s.db.Update(func(tx *bolt.Tx) error {
		v := tx.Bucket(bucketMeta).Get(keyLogLSN)
		if v == nil {
			return nil
		}
		return tx.Bucket(bucketMeta).Put(keyLogLSN, bytes.Clone(v))
	})
	if err != nil {
		return fmt.Errorf("close database: %w", err)
	}
	return nil
}

// Path returns the database file's path.
func (s *Store) Path() string { return s.path }

// Err returns the fatal commit error that stopped the store, or nil. The engine polls it (or
// sees it from Commit) and must exit: restart is the only recovery (docs/reliability.md A5).
func (s *Store) Err() error {
	s.fatalMu.Lock()
	defer s.fatalMu.Unlock()
	return s.fatal
}

func (s *Store) setFatal(err error) {
	s.fatalMu.Lock()
	defer s.fatalMu.Unlock()
	if s.fatal == nil {
		s.fatal = fmt.Errorf("database %s failed a commit and refuses further use: %w", s.path, err)
	}
}

// Stats are counters since Open.
type Stats struct {
	Commits      uint64 // history.Commits written
	Transactions uint64 // batches that held them, each one durable write (the log's record, or bbolt's synced commit)
	BoltCommits  uint64 // bbolt write transactions committed: with the log, one a checkpoint
	Rejected     uint64 // commits refused by validation (sequence conflicts, bad ids)
}

// Stats returns the store's counters.
func (s *Store) Stats() Stats {
	return Stats{Commits: s.commits.Load(), Transactions: s.txs.Load(), BoltCommits: s.boltTxs.Load(), Rejected: s.rejected.Load()}
}

// Close stops taking commits, lets the writer finish what is queued, closes the file and
// removes the pid file. It returns the fatal error, if the store had one, so a caller that
// only checks Close still exits non-zero.
func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		if s.readOnly {
			s.closeErr = s.closeReading()
			return
		}
		s.w.stop()
		s.closed.Store(true)
		s.writeMu.Lock() // bbolt's Close waits for its write transaction; the log's removal for its commit
		if s.Err() != nil {
			s.dropOpen()
		} else {
			_ = s.checkpoint()
		}
		s.writeMu.Unlock()
		logErr := s.closeLog()
		// Remove the pid file while we still hold the lock: after Close, it may be the next
		// holder's.
		err := os.Remove(s.pidPath)
		if errors.Is(err, os.ErrNotExist) {
			err = nil
		}
		if logErr != nil {
			err = logErr
		}
		if cerr := s.db.Close(); cerr != nil {
			err = cerr
		}
		if err != nil {
			s.closeErr = fmt.Errorf("close database: %w", err)
		} else if f := s.Err(); f != nil {
			s.closeErr = fmt.Errorf("close database: %w", f)
		}
	})
	return s.closeErr
}
