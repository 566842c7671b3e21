package history

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"
)

// checkDecodeEventJSON: decodeEventJSON gives json.Unmarshal's event, or an error where it
// gives one.
func checkDecodeEventJSON(t *testing.T, b []byte) {
	t.Helper()
	var got, want Event
	err := decodeEventJSON(b, &got)
	wantErr := json.Unmarshal(b, &want)
	if (err != nil) != (wantErr != nil) {
		t.Fatalf("%q: error %v, json.Unmarshal's %v", b, err, wantErr)
	}
	if err != nil {
		return
	}
	if !got.Time.Equal(want.Time) || got.Time.String() != want.Time.String() {
		t.Fatalf("%q: time %v, json.Unmarshal's %v", b, got.Time, want.Time)
	}
	got.Time, want.Time = time.Time{}, time.Time{}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%q:\n got %#v\nwant %#v", b, got, want)
	}
}

// decodeEventSeeds: AppendJSON's layout, and near misses of it that json.Unmarshal reads
// differently or refuses.
var decodeEventSeeds = []string{
	`{"seq":1,"type":"WorkflowStarted","time":"2026-11-29T21:00:00.000000005Z","data":{"input":{"a":[1,2]}}}`,
	`{"seq":9,"type":"ActivityScheduled","time":"2026-11-29T23:00:00+02:00","step":"steps[3]","activity_execution_id":"r:steps[3]","attempt":2,"data":{"a":"b c"}}`,
	`{"seq":0,"type":"","time":"0001-01-01T00:00:00Z"}`,
	`{"seq":2,"type":"X","time":"2026-11-29T21:00:00Z","attempt":-3}`,
	`{"seq":2,"type":"X","time":"2026-11-29T21:00:00Z","step":"é☃"}`,
	"{\"seq\":2,\"type\":\"X\",\"time\":\"2026-11-29T21:00:00Z\",\"step\":\"\xff\"}",
	`{"seq":2,"type":"X","time":"2026-11-29T21:00:00Z","step":"a\"b"}`,
	`{"seq":2,"type":"X","time":"2026-11-29T21:00:00Z","data":{"a":1} }`,
	`{"seq":2,"type":"X","time":"2026-11-29T21:00:00Z","data":{"a":1}`,
	`{"seq":2,"type":"X","time":"2026-11-29T21:00:00Z","data":{"a":}}`,
	`{"seq":2,"type":"X","time":"2026-11-29T21:00:00Z","data":null}`,
	`{"seq":2,"type":"X","time":"2026-11-29T21:00:00Z","data":[1]}`,
	`{"seq":2,"type":"X","time":"2026-11-29T21:00:00Z","data":{"a":1}}}`,
	`{"seq":02,"type":"X","time":"2026-11-29T21:00:00Z"}`,
	`{"seq":1e2,"type":"X","time":"2026-11-29T21:00:00Z"}`,
	`{"seq":-1,"type":"X","time":"2026-11-29T21:00:00Z"}`,
	`{"seq":18446744073709551616,"type":"X","time":"2026-11-29T21:00:00Z"}`,
	`{"seq":2,"type":"X","time":"2026-13-29T21:00:00Z"}`,
	`{"seq":2,"type":"X","time":"bad"}`,
	`{"seq":2,"type":"X","time":null}`,
	`{"seq":2,"type":"X","time":"2026-11-29T21:00:00Z","attempt":99999999999999999999}`,
	`{"seq":2,"type":"X","time":"2026-11-29T21:00:00Z","Attempt":3}`,
	`{"type":"X","seq":2,"time":"2026-11-29T21:00:00Z"}`,
	`{"seq":2,"type":"X","time":"2026-11-29T21:00:00Z","seq":3}`,
	`{"seq":2,"type":"X","time":"2026-11-29T21:00:00Z"} `,
	`{"seq":2,"type":"X","time":"2026-11-29T21:00:00Z"`,
	``, `{`, `[]`,
}

func TestDecodeEventJSONMatchesUnmarshal(t *testing.T) {
	for _, s := range decodeEventSeeds {
		checkDecodeEventJSON(t, []byte(s))
	}
	// What AppendJSON writes takes the hand-read path.
	at := time.Date(2026, 11, 29, 21, 0, 0, 5, time.UTC)
	for _, e := range []Event{
		{Seq: 1, Type: WorkflowStarted, Time: at, Data: json.RawMessage(`{"input":{"a":[1,2]}}`)},
		{Seq: 9, Type: ActivityCompleted, Time: at.In(time.FixedZone("z", 3600)), Step: "steps[3]@2.steps[0]", ActivityExecutionID: "r:steps[3]", Attempt: 2, Data: json.RawMessage(`{"output":"é"}`)},
		{Seq: 3, Type: TimerFired, Time: at},
	} {
		b, err := e.AppendJSON(nil)
		if err != nil {
			t.Fatal(err)
		}
		var got Event
		if !eventLayout(b, &got) {
			t.Fatalf("%s: not read by hand", b)
		}
		checkDecodeEventJSON(t, b)
	}
}

func FuzzDecodeEventJSON(f *testing.F) {
	for _, s := range decodeEventSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(checkDecodeEventJSON)
}

// BenchmarkDecodeEvent prices reading one stored event of a step's outcome.
func BenchmarkDecodeEvent(b *testing.B) {
	e := Event{Seq: 12, Type: ActivityCompleted, Time: time.Date(2026, 11, 29, 21, 0, 0, 5, time.UTC), Step: "steps[3]",
		ActivityExecutionID: "01JABCDEFGHJKMNPQRSTVWXYZ:steps[3]", Attempt: 1,
		Data: json.RawMessage(`{"output":{"status":"ok","id":"A-1042","items":[{"sku":"x1","qty":2},{"sku":"y7","qty":1}],"total":42.5},"plugin_sha256":"abababababababababababababababababababababababababababababababab"}`)}
	rec, err := EncodeEvent(e)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("by-hand", func(b *testing.B) {
		for b.Loop() {
			if _, err := DecodeEvent(rec); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		for b.Loop() {
			var e Event
			if err := json.Unmarshal(rec[4:], &e); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// TestDecodeEventAllocations: a stored event in AppendJSON's layout decodes in at most
// 8 allocations (json.Unmarshal took 12, and 7-9 µs; every event of a rebuilt run is decoded).
func TestDecodeEventAllocations(t *testing.T) {
	rec, err := EncodeEvent(Event{Seq: 12, Type: ActivityCompleted, Time: time.Date(2026, 11, 29, 21, 0, 0, 5, time.UTC), Step: "steps[3]",
		ActivityExecutionID: "run:steps[3]", Attempt: 1, Data: json.RawMessage(`{"output":{"status":"ok","n":[1,2]},"plugin_sha256":"ab"}`)})
	if err != nil {
		t.Fatal(err)
	}
	allocs := testing.AllocsPerRun(100, func() {
		if _, err := DecodeEvent(rec); err != nil {
			t.Fatal(err)
		}
	})
	if allocs > 8 {
		t.Fatalf("DecodeEvent: %.0f allocations, over 8", allocs)
	}
}
