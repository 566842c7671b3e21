package testsuite

import (
	"encoding/xml"
	"fmt"
	"io"
	"strings"
)

// WriteText prints the report for people: one line per passing file, each failed case with
// its mismatches at file:line:col and its timeline, and a summary.
func (rep *Report) WriteText(w io.Writer, coverage bool) {
	for _, fr := range rep.Files {
		if len(fr.Findings) > 0 {
			fmt.Fprintf(w, "FAIL %s: the test file cannot run\n", fr.File)
			for _, d := range fr.Findings.Sorted() {
				fmt.Fprintf(w, "  %s\n", d)
			}
			continue
		}
		if len(fr.Cases) == 0 {
			continue // --run selected none of its cases
		}
		failed := 0
		for _, c := range fr.Cases {
			if c.Passed {
				continue
			}
			failed++
			fmt.Fprintf(w, "FAIL %s:%d:%d: case %q\n", fr.File, c.Line, c.Column, c.Name)
			if c.Problem != "" {
				fmt.Fprintf(w, "  %s\n", indent(c.Problem))
			}
			for _, m := range c.Mismatches {
				fmt.Fprintf(w, "  %s:%d:%d: %s\n", fr.File, m.Line, m.Column, m.Path)
				fmt.Fprintf(w, "    expected: %s\n    actual:   %s\n", m.Expected, m.Actual)
				if m.Note != "" {
					fmt.Fprintf(w, "    (%s)\n", m.Note)
				}
			}
			fmt.Fprintf(w, "  timeline:\n")
			for _, l := range c.Timeline {
				fmt.Fprintf(w, "    %s\n", l)
			}
		}
		if failed == 0 {
			fmt.Fprintf(w, "ok   %s (%d %s)\n", fr.File, len(fr.Cases), plural(len(fr.Cases), "case", "cases"))
		}
	}
	if coverage {
		if len(rep.Coverage) == 0 {
			fmt.Fprintln(w, "coverage: every step was reached and every compensation ran")
		} else {
			fmt.Fprintln(w, "coverage: not exercised by any case:")
			for _, u := range rep.Coverage {
				fmt.Fprintf(w, "  %s:%d:%d: %s %s\n", u.Workflow, u.Line, u.Column, u.What, u.Step)
			}
		}
	}
	verdict := "PASS"
	if rep.Failed > 0 {
		verdict = "FAIL"
	}
	fmt.Fprintf(w, "%s: %d passed, %d failed\n", verdict, rep.Passed, rep.Failed)
}

func indent(s string) string { return strings.ReplaceAll(s, "\n", "\n  ") }

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name     string      `xml:"name,attr"`
	Tests    int         `xml:"tests,attr"`
	Failures int         `xml:"failures,attr"`
	Errors   int         `xml:"errors,attr"`
	Cases    []junitCase `xml:"testcase"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Time      string        `xml:"time,attr"`
	Failure   *junitFailure `xml:"failure,omitempty"`
	Error     *junitFailure `xml:"error,omitempty"`
}

type junitFailure struct {
	Message string `xml:"message,attr"`
	Text    string `xml:",chardata"`
}

// WriteJUnit writes the report as JUnit XML, one testsuite per file. A file that cannot run
// is one testcase with an error. Times are 0: virtual durations are not test run times.
func (rep *Report) WriteJUnit(w io.Writer) error {
	out := junitSuites{}
	for _, fr := range rep.Files {
		s := junitSuite{Name: fr.File}
		if len(fr.Findings) > 0 {
			s.Tests, s.Errors = 1, 1
			s.Cases = append(s.Cases, junitCase{Name: "(file)", Classname: fr.File, Time: "0",
				Error: &junitFailure{Message: "the test file cannot run", Text: fr.Findings.Sorted().Error()}})
		}
		for _, c := range fr.Cases {
			jc := junitCase{Name: c.Name, Classname: fr.File, Time: "0"}
			s.Tests++
			if !c.Passed {
				s.Failures++
				var b strings.Builder
				msg := c.Problem
				if msg != "" {
					b.WriteString(c.Problem + "\n")
				}
				for _, m := range c.Mismatches {
					if msg == "" {
						msg = fmt.Sprintf("%s: expected %s, actual %s", m.Path, m.Expected, m.Actual)
					}
					fmt.Fprintf(&b, "%s:%d:%d: %s\n  expected: %s\n  actual:   %s\n", fr.File, m.Line, m.Column, m.Path, m.Expected, m.Actual)
				}
				b.WriteString("timeline:\n  " + strings.Join(c.Timeline, "\n  ") + "\n")
				jc.Failure = &junitFailure{Message: msg, Text: b.String()}
			}
			s.Cases = append(s.Cases, jc)
		}
		out.Tests += s.Tests
		out.Failures += s.Failures + s.Errors
		out.Suites = append(out.Suites, s)
	}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(out); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}
