package spec

import "unicode/utf8"

// precountNodes estimates, from the bytes alone, how many nodes yaml would build for data,
// so a file over MaxNodes is refused before yaml builds its tree: the tree costs some 320
// bytes a node (1 MiB of "[1,1,1,...]" made 520,000 nodes and 160 MiB before checkTree could
// count them). It counts the indicators that start nodes, each for the most nodes it can
// start, and never falls more than two below yaml's count (the document and a root scalar,
// which no indicator announces; FuzzPrecount holds it to that):
//
//	[  a flow sequence and its first item             2
//	{  a flow mapping and its first key and value     3
//	,  the next flow entry: a key and value at most   2
//	:  a key and its value                            2
//	-  a block sequence entry                         1
//	?  an explicit key and its value                  2
//
// ':' counts where YAML can read it as an indicator: before a space, a line end or a flow
// indicator, or after a quote or a closing bracket (a JSON-like key). '-' counts before a
// space or a line end. '?' always counts: inside a flow collection it is a key indicator
// whatever follows it ("[?0]"). It keeps no state: it skips neither quoted text nor comments
// nor block scalars, because a scanner that tracks them can be misled (a quote inside a plain
// scalar, a bracket inside a quoted one) into skipping real structure. So text full of these
// characters overcounts, which only a file of 50,000 of them could notice. It returns the
// count, stopping once it passes limit, with the 1-based line and column where it did.
func precountNodes(data []byte, limit int) (n, line, col int) {
	line, lineStart := 1, 0
	for i, c := range data {
		switch c {
		case '\n':
			line, lineStart = line+1, i+1
			continue
		case '[':
			n += 2
		case '{':
			n += 3
		case ',':
			n += 2
		case ':':
			if indicatorAfter(data, i+1) || i > 0 && (data[i-1] == '"' || data[i-1] == '\'' || data[i-1] == ']' || data[i-1] == '}') {
				n += 2
			}
		case '-':
			if spaceAt(data, i+1) {
				n++
			}
		case '?':
			n += 2
		default:
			continue
		}
		if n > limit {
			return n, line, utf8.RuneCount(data[lineStart:i]) + 1
		}
	}
	return n, line, 0
}

// spaceAt says whether data[i] separates tokens: a space, a tab, a line end, or the end.
func spaceAt(data []byte, i int) bool {
	if i >= len(data) {
		return true
	}
	switch data[i] {
	case ' ', '\t', '\r', '\n':
		return true
	}
	return false
}

// indicatorAfter says whether a ':' followed by data[i] can be a value indicator: a
// separator or a flow indicator follows it.
func indicatorAfter(data []byte, i int) bool {
	if spaceAt(data, i) {
		return true
	}
	switch data[i] {
	case ',', '[', ']', '{', '}':
		return true
	}
	return false
}
