package spec

// Closest returns the candidate closest to name, or "" when none is close enough to be a
// likely typo (the rule of the "did you mean" hints in diagnostics). The command line uses it
// for commands and flags.
func Closest(name string, candidates []string) string { return suggest(name, candidates) }
