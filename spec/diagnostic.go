package spec

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// Severity of a Diagnostic.
const (
	SeverityError   = "error"
	SeverityWarning = "warning"
	// SeverityInfo explains a difference that needs no change (CheckTarget's findings).
	SeverityInfo = "info"
)

// Diagnostic is one finding about a workflow file, with the position it refers to.
// Its JSON form is the stable output of `wend validate --json`.
type Diagnostic struct {
	File   string `json:"file"`
	Line   int    `json:"line"`   // 1-based; 0 when the finding is about the whole file
	Column int    `json:"column"` // 1-based; 0 when unknown
	Path   string `json:"path"`   // e.g. "steps[1].retry.tries"; "" for the document
	// Name is Path for a person: from the nearest step with an id, by its id ("charge.retry.tries"
	// for `id: charge` at steps[1]); "" where no step on the path has one.
	Name     string `json:"name,omitempty"`
	Message  string `json:"message"`
	Severity string `json:"severity"`
}

// String formats d as `file:line:col: path: message`.
func (d Diagnostic) String() string {
	var b strings.Builder
	b.WriteString(d.File)
	if d.Line > 0 {
		fmt.Fprintf(&b, ":%d:%d", d.Line, max(d.Column, 1))
	}
	b.WriteString(": ")
	if d.Name != "" {
		b.WriteString(d.Name)
		b.WriteString(": ")
	} else if d.Path != "" {
		b.WriteString(d.Path)
		b.WriteString(": ")
	}
	if d.Severity == SeverityWarning || d.Severity == SeverityInfo {
		b.WriteString(d.Severity + ": ")
	}
	b.WriteString(d.Message)
	return b.String()
}

// Diagnostics is the list of findings for one or more files.
type Diagnostics []Diagnostic

// IsError reports whether a finding makes its file invalid (not a warning or an info).
func (d Diagnostic) IsError() bool {
	return d.Severity != SeverityWarning && d.Severity != SeverityInfo
}

// HasErrors reports whether any finding is an error (not a warning or an info).
func (ds Diagnostics) HasErrors() bool {
	return slices.ContainsFunc(ds, Diagnostic.IsError)
}

// Sorted returns the findings sorted by file and position, without exact duplicates.
func (ds Diagnostics) Sorted() Diagnostics {
	out := slices.Clone(ds)
	slices.SortStableFunc(out, func(a, b Diagnostic) int {
		return cmp.Or(
			cmp.Compare(a.File, b.File),
			cmp.Compare(a.Line, b.Line),
			cmp.Compare(a.Column, b.Column),
			cmp.Compare(a.Path, b.Path),
			cmp.Compare(a.Message, b.Message),
		)
	})
	return slices.Compact(out)
}

// Error joins the findings, one per line, so Diagnostics can travel as an error.
func (ds Diagnostics) Error() string {
	lines := make([]string, len(ds))
	for i, d := range ds {
		lines[i] = d.String()
	}
	return strings.Join(lines, "\n")
}
