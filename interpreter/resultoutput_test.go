package interpreter

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/wendflow/wend/history"
)

// TestResultOutputMatchesTwoPassDecode: ActivityCompleted's output, decoded in one pass, is
// the value the two passes (payload to RawMessage, then that to a value) gave, and a payload
// that is not JSON is still an error naming the event.
func TestResultOutputMatchesTwoPassDecode(t *testing.T) {
	for _, tc := range []struct {
		name, data string
		bad        bool
	}{
		{name: "no payload", data: ""},
		{name: "no output", data: `{"plugin_sha256":"ab"}`},
		{name: "null", data: `{"output":null}`},
		{name: "number", data: `{"output":12345678901234567890}`},
		{name: "record", data: `{"output":{"a":[1,"x",true,{"b":null}],"c":1.5e3},"plugin_sha256":"ab"}`},
		{name: "escapes", data: `{"output":"\u003c\u2028\\\"é"}`},
		{name: "case-folded key", data: `{"OUTPUT":[1]}`},
		{name: "output twice", data: `{"output":1,"output":{"a":2}}`},
		{name: "escaped key", data: `{"out\u0070ut":3}`},
		{name: "escaped output", data: `{"output":"a\nb"}`},
		{name: "spaced", data: " {\n \"output\" : [ 1 , 2 ] } "},
		{name: "truncated", data: `{"output":{"a":1}`, bad: true},
		{name: "not an object", data: `[1]`, bad: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ev := history.Event{Seq: 7, Type: history.ActivityCompleted, Data: json.RawMessage(tc.data)}
			got, err := resultOutput(ev)
			if tc.bad {
				if err == nil {
					t.Fatalf("no error for %q", tc.data)
				}
				if want := "ActivityCompleted event 7: "; len(err.Error()) < len(want) || err.Error()[:len(want)] != want {
					t.Fatalf("error %q does not name the event", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			res, err := history.DataOf[history.ActivityResult](ev)
			if err != nil {
				t.Fatal(err)
			}
			want, err := decodeJSON(res.Output)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("one pass %#v, two passes %#v", got, want)
			}
		})
	}
}
