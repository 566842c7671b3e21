//go:build !linux || wend_portable

package boltstore

// fillDirect fills nothing here: the zeros are written through the cache (zeroFillFrom).
func (l *wal) fillDirect(string, int64, int64) (done bool, err error) { return false, nil }
