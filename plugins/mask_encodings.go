package plugins

import (
	"bytes"
	"cmp"
	"encoding/base64"
	"encoding/json"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// minBase64Core is the shortest base64 run masked for a value that sits inside a longer
// encoded text (user:password in a Basic header): shorter runs would mask unrelated text.
const minBase64Core = 8

// encodings are the forms in which a secret value v commonly comes back: as is,
// JSON-escaped, Go-quoted (%q, %+q), URL-escaped (path, query, user info), base64
// (standard and URL, padded and raw, on its own and inside a longer encoded text), and the
// JSON-escaped form of each, as a log line holding JSON shows them; and each line of a
// multi-line value.
func encodings(v string) []string {
	forms := []string{v, jsonEscaped(v), unquote(strconv.Quote(v)), unquote(strconv.QuoteToASCII(v)),
		url.PathEscape(v), url.QueryEscape(v), (&url.URL{Path: v}).EscapedPath(),
		url.User(v).String(), userPassword(v)}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding, base64.RawStdEncoding, base64.RawURLEncoding} {
		forms = append(forms, enc.EncodeToString([]byte(v)))
		forms = append(forms, base64Cores(enc, []byte(v))...)
	}
	for _, f := range slices.Clone(forms) {
		forms = append(forms, jsonEscaped(f))
	}
	forms = append(forms, lines(v)...)
	out := forms[:0]
	for _, f := range forms {
		if f != "" && !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	return out
}

// base64Cores are the runs of base64 that v makes wherever it starts inside a longer
// encoded text: for each of the three alignments, the characters that depend on v's bytes
// alone.
func base64Cores(enc *base64.Encoding, v []byte) []string {
	var out []string
	for shift := 1; shift <= 2; shift++ {
		skip := 3 - shift // v's bytes that share a group with what comes before it
		if len(v) <= skip {
			continue
		}
		whole := (len(v) - skip) / 3 * 3
		if s := enc.WithPadding(base64.NoPadding).EncodeToString(v[skip : skip+whole]); len(s) >= minBase64Core {
			out = append(out, s)
		}
	}
	if whole := len(v) / 3 * 3; whole < len(v) { // aligned, followed by more text: the full groups
		if s := enc.WithPadding(base64.NoPadding).EncodeToString(v[:whole]); len(s) >= minBase64Core {
			out = append(out, s)
		}
	}
	return out
}

// minLine is the shortest line of a multi-line value masked on its own.
const minLine = 3

// lines are the lines of a multi-line value: a plugin's stderr reaches the host line by line,
// so a value printed as is comes back in pieces.
func lines(v string) []string {
	if !strings.ContainsAny(v, "\r\n") {
		return nil
	}
	var out []string
	for _, l := range strings.FieldsFunc(v, func(r rune) bool { return r == '\n' || r == '\r' }) {
		if len(l) >= minLine {
			out = append(out, l)
		}
	}
	return out
}

// userPassword is v escaped as a URL's password (user:PASSWORD@host).
func userPassword(v string) string {
	s := url.UserPassword("", v).String()
	return s[1:] // drop the ':' after the empty user
}

func jsonEscaped(s string) string {
	b, _ := json.Marshal(s)
	return unquote(string(b))
}

func unquote(q string) string { return q[1 : len(q)-1] }

// longestFirst orders forms so that at any position the longest one matches first.
func longestFirst(forms []string) []string {
	slices.SortFunc(forms, func(a, b string) int {
		return cmp.Or(cmp.Compare(len(b), len(a)), bytes.Compare([]byte(a), []byte(b)))
	})
	return slices.Compact(forms)
}
