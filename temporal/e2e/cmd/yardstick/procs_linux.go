//go:build linux

package main

import "syscall"

// childAttr makes a child get SIGTERM when the yardstick dies, so a killed yardstick stops
// the `wend serve` processes it started (which stop their plugins).
func childAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM} }
