package boltstore

// syncFolder does nothing on Windows: a folder cannot be flushed there (FlushFileBuffers on a
// folder handle is refused), and NTFS journals a folder's entries itself. What this costs on
// a power loss is written in docs/reliability.md under the store on each OS.
func syncFolder(string) error { return nil }
