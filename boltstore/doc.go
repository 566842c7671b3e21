// Package boltstore is the durable history.Store, on a single bbolt file. It is the only
// package of wend that imports go.etcd.io/bbolt (besides the benchmarks, go run ./bench, whose
// yardstick is a plain bbolt file).
//
// It owns the file layout, the process lock, the group-commit writer, the optional write-ahead
// log and the store's integrity check. Layout (schema version 2):
//
//	meta                 "schema" -> "2"; "upgrade_from" -> the run id the upgrade from schema 1
//	                     goes on from, while one is under way (upgrade.go); "log_lsn" -> big-endian uint64, the last log record
//	                     applied (written only once a write-ahead log was used: wal.go);
//	                     "log_id" -> the id of the log in front of bbolt while a store runs with
//	                     one, deleted by a clean Close (logid.go); "log_lost" -> when and why
//	                     the database went on without its log (Options.AcceptLogLoss), kept for
//	                     good; "log_lost_ack" -> who acknowledged that loss, and when (logack.go);
//	                     "log_tail" -> big-endian uint64, the first LSN of the log segment
//	                     appended to at the last checkpoint, while a log runs (walcheck.go)
//	runs                 run id -> framed JSON history.Run without last_seq (storedRun)
//	run_events           slot | big-endian uint64 seq -> history.EncodeEvent bytes (CRC-32C
//	                     framed): the events of every run of at most 8 KiB of them, packed
//	                     into shared pages; a slot is 8 bytes, a number handed out in the order
//	                     runs first commit (the bucket's sequence) in the first 7, big-endian,
//	                     and their CRC-8 in the last, so that the runs still growing are side by
//	                     side at the end of the key space (events.go)
//	run_slots            run id -> frame of the run's slot in run_events
//	events/<run id>      big-endian uint64 seq -> history.EncodeEvent bytes: the events of a
//	                     run past 8 KiB of them, moved here from run_events in the commit that
//	                     passes it, in a bucket of their own whose pages a long history fills
//	                     whole; a run's events are in one of the two places, never both
//	tasks                task id -> framed JSON history.Task
//	workflows            uvarint(len(workflow id)) | workflow id | run id -> frame of nothing
//	                     uvarint(len(workflow id)) | workflow id -> frame of uvarint(entries)
//	search               uvarint(len(field)) | field | uvarint(len(value)) | value | run id ->
//	                     frame of nothing: the runs' search field values, for equality
//	                     (search.go); made by the first commit of a run with a search value
//	counts               uvarint(len(name)) | name | status -> frame of uvarint(runs): the runs
//	                     of each workflow name in each status, kept at commit (counts.go)
//	started              ^sortable(started_at ns) | ^run id | 0xff -> frame of nothing: every
//	                     run in the list's order, newest first (counts.go)
//	schedules            schedule id -> framed record of schedule/runner's state, opaque here;
//	                     made on first use, written by checkpoints of its own (schedules.go)
//
// A frame is 0x01 | CRC-32C(key | body) | body (record.go).
//
// Schema 1 had no run_events nor run_slots: every run's events were a bucket of their own,
// which past bbolt's inline limit (a quarter page) took a page of the file, mostly empty for
// a run of a few events. A store opened for reading reads such a file as it is; a writing Open
// upgrades it first, a batch of runs per synced transaction, and a file whose upgrade was cut
// off opens as one of schema 2 and is upgraded on (upgrade.go).
//
// To settle the store is to checkpoint it (settle in opentx.go), so that bbolt's file itself
// holds every acknowledged commit before something reads the file rather than the store: a
// backup, a compaction, Check's page walk. The write-ahead log is a folder of segment files
// (wal.go); at a roll it moves on to a new segment, once a record does not fit in the current
// one, and the old ones are checkpointed and removed (or recycled).
//
// Options.ReadOnly opens an existing database writing nothing at all (not the file, its log
// or its folder), for the commands that only read, so they work on a full disk (reading.go).
//
// Invariants:
//   - Commit returns nil only after the log record holding the whole history.Commit is fsynced
//     (wal.go; bbolt's transaction is left open and committed, synced by bbolt, only at
//     checkpoints, checkpoint.go: the file is always a plain bbolt database at its last
//     checkpoint), or with Options.NoLog after the bbolt transaction holding it is. A log left by a crash is
//     replayed at every Open. A commit that does not continue its run's stored history
//     (history.CheckAppend) is rejected alone and writes nothing.
//   - Runs are deleted only by a purge (purge.go): closed runs, whole (record, events and slot,
//     index entries, tasks), a batch per synced bbolt transaction; never an open run, and a child
//     run only with or after its parent.
//   - One goroutine writes. Commits queued while it is busy are applied in one bbolt transaction
//     (group commit); it starts at once when idle, with no batching timer. Between checkpoints
//     reads run inside the writer's open transaction, which holds every answered commit
//     (opentx.go).
//   - A failed bbolt commit (an fsync or write error, a full disk, MaxSize) is fatal: the store
//     answers every later call with that error and writes nothing more, because after a failed
//     fsync the kernel may have dropped dirty pages it still serves from cache (fsyncgate).
//   - A run's last seq is the seq of its last event, read from there: the record does not hold
//     it, so a commit that only appends events leaves the record's bytes as they are and does
//     not rewrite it (one page write fewer per step).
//   - Events, run records, task records and index entries are decoded with their checksum
//     verified on every read; a mismatch is an error naming the record, never a silently
//     different history. A damaged task is set aside (Tasks returns the others with a
//     *history.DamagedTasksError), since the engine's repair rebuilds it from history.
//   - Read transactions are short and never nested: a history is copied out in chunks of about
//     1 MiB, each in its own transaction, and decoded outside them. A commit that grows the mmap
//     waits for every open reader (bbolt remap stalls), so it never waits long, and the large mmap
//     reserved at open makes it rare. A read inside the open transaction holds the writer: it
//     too is short. A read of every run is made of slices of short reads, each resuming after
//     the last key (scanRuns); the run counts and the started index spare the metrics and the
//     list pages such reads (counts.go). Check reads each run's history the same way; its page
//     checks (Open's walk, then bbolt's tx.Check) and its comparison of the counts and the
//     started index with the records are the exception: each holds one bbolt read transaction
//     of the file, which the writer does not wait for.
//   - A purge batch holds the writer's lock only to checkpoint and begin its own transaction;
//     then bbolt's writer lock keeps the writer waiting while reads run beside it (purge.go).
//   - A new database file appears at its path only complete and synced: it is built in a temp
//     file beside it, synced, linked into place, and the directory synced (etcd#16596). One
//     process creates at a time: PATH.lock's OS lock is held from before the file is looked
//     for until it exists and crashed creators' temp files are removed (createlock.go).
//   - The workflow and search indexes are written in the commit that writes their run's
//     record, from the record's bytes, so the log's replay makes them as the live commit did;
//     Check compares them with the records both ways, RepairIndexes rebuilds them
//     (indexrepair.go).
//   - A backup (backup.go) is bbolt's Tx.WriteTo of a state committed after a checkpoint, so
//     it holds every acknowledged commit; it appears at its path only whole, synced and
//     without a log id. Compact (compact.go) holds the lock throughout and renames a whole,
//     synced file over the database; an Open that locked the replaced file opens again.
//   - One process holds the file (bbolt's flock); a second Open fails within about a second
//     naming the holder's pid, read from the PATH.pid sidecar the holder writes.
//   - A damaged file (a torn sector, rot) fails Open or a read with ErrDamaged, never the
//     process: bbolt's panics on bad pages become errors. bbolt's Open walks every page in a
//     goroutine of its own, where such a panic cannot be caught, so Open first reads every
//     bucket of the file, read-only, in the caller's goroutine, where it can
//     (docs/reliability.md A3).
//     Damage after Open (rot) fails the read that meets it, and Check, which walks every bucket
//     as Open does, reports it. Buckets are iterated from a Seek, never from First or Last: on a
//     zeroed inline bucket page those loop for ever where Seek panics.
//   - A flipped bit in an event's key never makes it another run's: the seq is checked against
//     the event, a slot against its CRC-8; a history is read whole from seq 1, or after a seq
//     from the next, with no gap (Events), and the key after a run's last event in run_events
//     is another slot's, so a history never silently reads shorter (events.go).
package boltstore
