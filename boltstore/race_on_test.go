//go:build race

package boltstore

// raceDetector is true in a -race build: there each power-loss trial runs about ten times
// slower, and the detector looks at memory accesses, which a few trials exercise as well as many.
const raceDetector = true
