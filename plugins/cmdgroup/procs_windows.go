//go:build windows

package cmdgroup

import "errors"

// Windows keeps no records: the exec builtin runs each command in a job object of its own,
// which ends all of the command's processes when it is closed or its plugin dies.

func procStart(int) (uint64, error)    { return 0, errors.New("no process group records on Windows") }
func bootID() string                   { return "windows" }
func signalGroup(*Record) (int, error) { return 0, nil }
func syncDir(string) error             { return nil }
