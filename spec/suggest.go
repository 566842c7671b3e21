package spec

import (
	"strconv"
	"strings"
	"unicode"
)

// suggest returns the candidate closest to name, or "" when none is close enough to be a
// likely typo: at most one edit per three characters (a swap of two letters is one edit).
func suggest(name string, candidates []string) string {
	best, bestDist := "", max(1, len([]rune(name))/3)+1
	for _, c := range candidates {
		if d := editDistance(name, c); d < bestDist {
			best, bestDist = c, d
		}
	}
	return best
}

// editDistance is the optimal-string-alignment distance over runes: insertions, deletions,
// substitutions and swaps of adjacent runes each cost one.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	d := make([][]int, len(ra)+1)
	for i := range d {
		d[i] = make([]int, len(rb)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(ra); i++ {
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(ra)][len(rb)]
}

// nameList joins names from the user's file for a message. A name holding a line break or
// another control character is shown quoted, so a finding always stays on one line.
func nameList(names []string) string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = oneLine(n)
	}
	return strings.Join(out, ", ")
}

// oneLine is n, quoted if it holds a line break or another control character.
func oneLine(n string) string {
	if strings.ContainsFunc(n, func(r rune) bool { return unicode.IsControl(r) || r == '\u2028' || r == '\u2029' }) {
		return strconv.Quote(n)
	}
	return n
}
