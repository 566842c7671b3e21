package spec

import "unicode/utf8"

// precountNodes estimates, from the bytes alone, how many nodes yaml would build for data,
// so a file over MaxNodes is refused before yaml builds its tree: the tree costs some 340
// bytes a node (1 MiB of "[1,1,1,...]" made 520,000 nodes, 175 MB, before checkTree could
// count them). It reads every indicator that starts nodes and never undercounts by more than
// two (the document and a root scalar; FuzzPrecount holds it to that):
//
//	[  a flow sequence and its first item      2
//	{  a flow mapping and its first key, value 3
//	,  the next item (a key and value in {})   1 (2)
//	:  a key and its value                     2
//	-  a block sequence entry                  1
//	?  an explicit key and its value           2
//
// with ':', '-' and '?' counted only before a space, a tab or a line end (or, for ':', in a
// flow or after a quote) as YAML reads them. Quoted text and comments are not skipped: a
// quote in a plain scalar would make a scanner that skips them skip real structure, so they
// may overcount, which only a file of 100,000 such characters could notice. It returns the
// count, stopping once it passes limit, with the 1-based line and column where it did.
func precountNodes(data []byte, limit int) (n, line, col int) {
	var flow []byte // open '[' and '{', innermost last
	line, lineStart := 1, 0
	for i, c := range data {
		switch c {
		case '\n':
			line, lineStart = line+1, i+1
			continue
		case '[':
			n += 2
			flow = append(flow, c)
		case '{':
			n += 3
			flow = append(flow, c)
		case ']', '}':
			if len(flow) > 0 {
				flow = flow[:len(flow)-1]
			}
		case ',':
			switch {
			case len(flow) == 0: // plain text in block context
			case flow[len(flow)-1] == '{':
				n += 2
			default:
				n++
			}
		case ':':
			if len(flow) > 0 || spaceAt(data, i+1) || i > 0 && (data[i-1] == '"' || data[i-1] == '\'') {
				n += 2
			}
		case '-':
			if spaceAt(data, i+1) {
				n++
			}
		case '?':
			if spaceAt(data, i+1) {
				n += 2
			}
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
