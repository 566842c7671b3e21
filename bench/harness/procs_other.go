//go:build !linux

package harness

import "syscall"

// ChildAttr is nothing where there is no parent-death signal.
func ChildAttr() *syscall.SysProcAttr { return nil }

// NoLeftovers checks nothing where there is no /proc to look in.
func NoLeftovers(...string) error { return nil }
