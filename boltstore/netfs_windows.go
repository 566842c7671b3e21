//go:build windows && !wend_portable

package boltstore

import (
	"path/filepath"

	"golang.org/x/sys/windows"
)

// networkFS reports whether dir is on a network share: a UNC path, or a drive letter Windows
// maps to one (GetDriveType DRIVE_REMOTE of the path's volume).
func networkFS(dir string) (string, bool) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", false
	}
	if uncPath(abs) {
		return "a network share (UNC path)", true
	}
	p, err := windows.UTF16PtrFromString(abs)
	if err != nil {
		return "", false
	}
	vol := make([]uint16, windows.MAX_PATH+1)
	if err := windows.GetVolumePathName(p, &vol[0], uint32(len(vol))); err != nil {
		return "", false
	}
	if windows.GetDriveType(&vol[0]) == windows.DRIVE_REMOTE {
		return "a network drive (" + windows.UTF16ToString(vol) + ")", true
	}
	return "", false
}
