//go:build race

package spec

// The race detector makes the parser several times slower; time guards scale with it.
func init() { timeScale = 10 }
