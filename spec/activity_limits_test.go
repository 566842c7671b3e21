package spec

import (
	"strings"
	"testing"
	"time"
)

func TestParseRate(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Rate
		err  string
	}{
		{"10/s", Rate{10, time.Second}, ""},
		{"600/m", Rate{600, time.Minute}, ""},
		{" 1/h ", Rate{1, time.Hour}, ""},
		{"100000/s", Rate{100000, time.Second}, ""},
		{"0/s", Rate{}, `rate "0/s": the count must be from 1 to 100000`},
		{"100001/s", Rate{}, `rate "100001/s": the count must be from 1 to 100000`},
		{"10/sec", Rate{}, `rate "10/sec": write N/s, N/m or N/h, e.g. 10/s`},
		{"-1/s", Rate{}, `rate "-1/s": write N/s, N/m or N/h, e.g. 10/s`},
		{"99999999999999999999/s", Rate{}, `rate "99999999999999999999/s": the count must be from 1 to 100000`},
	} {
		t.Run(tc.in, func(t *testing.T) {
			got, err := ParseRate(tc.in)
			if tc.err != "" {
				if err == nil || err.Error() != tc.err {
					t.Fatalf("err %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("%+v %v, want %+v", got, err, tc.want)
			}
			if got.String() != trimmed(tc.in) {
				t.Errorf("String() %q, want %q", got.String(), trimmed(tc.in))
			}
		})
	}
}

func trimmed(s string) string {
	for len(s) > 0 && s[0] == ' ' {
		s = s[1:]
	}
	for len(s) > 0 && s[len(s)-1] == ' ' {
		s = s[:len(s)-1]
	}
	return s
}

func TestLimitsDecoded(t *testing.T) {
	src := `wend: v1
name: pay
plugins: {payments: ./payments, mail: ./mail}
limits:
  payments.charge: {concurrency: 5, rate: 10/s}
  mail.send: {rate: 600/m}
steps:
  - {id: c, activity: payments.charge}
  - {id: m, activity: mail.send}
`
	w, ds := Load("pay.wend.yaml", []byte(src))
	if ds.HasErrors() {
		t.Fatal(ds.Error())
	}
	if got := w.LimitOrder; len(got) != 2 || got[0] != "payments.charge" || got[1] != "mail.send" {
		t.Fatalf("order %q", got)
	}
	c, m := w.Limits["payments.charge"], w.Limits["mail.send"]
	if c.Concurrency != 5 || c.Rate != (Rate{10, time.Second}) || c.Pos.Line != 5 {
		t.Errorf("payments.charge: %+v", c)
	}
	if m.Concurrency != 0 || m.Rate != (Rate{600, time.Minute}) {
		t.Errorf("mail.send: %+v", m)
	}
	var limitFindings []string
	for _, d := range CheckTarget(w, TargetTemporal) {
		if strings.HasPrefix(d.Path, "limits") && d.Severity == SeverityWarning {
			limitFindings = append(limitFindings, d.Path)
		}
	}
	if len(limitFindings) != 2 || limitFindings[0] != `limits["payments.charge"]` {
		t.Errorf("temporal findings on limits: %q, want a warning per limit", limitFindings)
	}
}
