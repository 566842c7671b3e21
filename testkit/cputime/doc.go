// Package cputime reads the process's own CPU time for benchmarks that report CPU beside wall
// time.
package cputime
