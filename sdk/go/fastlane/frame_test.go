package fastlane

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"testing"

	"google.golang.org/protobuf/proto"

	pluginv1 "github.com/wendflow/wend/sdk/go/proto/wend/plugin/v1"
)

// header is the 4-byte length a frame of body starts with.
func header(body []byte) []byte {
	return binary.BigEndian.AppendUint32(nil, uint32(len(body)))
}

func TestReader(t *testing.T) {
	big := bytes.Repeat([]byte{7}, keepBytes+1)
	for _, tc := range []struct {
		name   string
		stream []byte
		max    int
		want   [][]byte
		err    error // after the frames in want
	}{
		{"empty stream", nil, 10, nil, io.EOF},
		{"one frame", append(header([]byte("abc")), "abc"...), 10, [][]byte{[]byte("abc")}, io.EOF},
		{"empty frame", header(nil), 0, [][]byte{{}}, io.EOF},
		{"two frames", append(append(header([]byte("a")), 'a'), append(header([]byte("bc")), "bc"...)...), 2, [][]byte{[]byte("a"), []byte("bc")}, io.EOF},
		{"at the limit", append(header([]byte("abcd")), "abcd"...), 4, [][]byte{[]byte("abcd")}, io.EOF},
		{"over the limit", append(header([]byte("abcde")), "abcde"...), 4, nil, ErrTooLarge},
		{"length 2^32-1", []byte{0xff, 0xff, 0xff, 0xff}, MaxFrame, nil, ErrTooLarge},
		{"cut in the header", []byte{0, 0}, 10, nil, io.ErrUnexpectedEOF},
		{"cut in the body", append(header([]byte("abc")), "ab"...), 10, nil, io.ErrUnexpectedEOF},
		{"header only", header([]byte("abc")), 10, nil, io.ErrUnexpectedEOF},
		{"larger than kept", append(header(big), big...), len(big), [][]byte{big}, io.EOF},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := NewReader(bytes.NewReader(tc.stream), tc.max)
			for i, want := range tc.want {
				got, err := r.Next()
				if err != nil || !bytes.Equal(got, want) {
					t.Fatalf("frame %d: %q, %v; want %q", i, got, err, want)
				}
			}
			if _, err := r.Next(); !errors.Is(err, tc.err) {
				t.Fatalf("after %d frames: %v, want %v", len(tc.want), err, tc.err)
			}
		})
	}
}

// Frames written are read back the same, and a message over the limit is refused before a
// byte is written.
func TestWriterRoundTrip(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriter(&buf, 64)
	msgs := []*pluginv1.ExecuteInput{
		{Input: &pluginv1.ExecuteInput_Request{Request: &pluginv1.ExecuteRequest{Activity: "greet", Input: []byte(`{"name":"x"}`)}}},
		{Input: &pluginv1.ExecuteInput_Cancel{Cancel: &pluginv1.Cancel{Reason: "deadline"}}},
		{},
	}
	for _, m := range msgs {
		if err := w.Write(m); err != nil {
			t.Fatal(err)
		}
	}
	n := buf.Len()
	huge := &pluginv1.ExecuteInput{Input: &pluginv1.ExecuteInput_Request{Request: &pluginv1.ExecuteRequest{Input: make([]byte, 64)}}}
	if err := w.Write(huge); !errors.Is(err, ErrTooLarge) || buf.Len() != n {
		t.Fatalf("oversized message: %v, %d bytes written; want ErrTooLarge and none", err, buf.Len()-n)
	}
	if err := w.WriteRaw(make([]byte, 65)); !errors.Is(err, ErrTooLarge) || buf.Len() != n {
		t.Fatalf("oversized raw frame: %v", err)
	}
	r := NewReader(&buf, 64)
	for i, want := range msgs {
		got := new(pluginv1.ExecuteInput)
		if err := r.Read(got); err != nil || !proto.Equal(got, want) {
			t.Fatalf("message %d: %v, %v; want %v", i, got, err, want)
		}
	}
	if err := r.Read(new(pluginv1.ExecuteInput)); !errors.Is(err, io.EOF) {
		t.Fatalf("at the end: %v", err)
	}
}

func TestReadBadMessage(t *testing.T) {
	stream := append(header([]byte{0xff, 0xff}), 0xff, 0xff)
	err := NewReader(bytes.NewReader(stream), 10).Read(new(pluginv1.ExecuteEvent))
	if !errors.Is(err, ErrBadFrame) {
		t.Fatalf("%v, want ErrBadFrame", err)
	}
}

// FuzzReader: any byte stream gives frames within the limit and then an error, never a panic,
// and each frame is decoded as both messages a lane carries without a panic.
//
//	cd sdk/go && go test -run '^$' -fuzz FuzzReader -fuzztime 30s ./fastlane
func FuzzReader(f *testing.F) {
	var buf bytes.Buffer
	w := NewWriter(&buf, MaxFrame)
	_ = w.Write(&pluginv1.ExecuteEvent{Event: &pluginv1.ExecuteEvent_Result{Result: &pluginv1.Result{Output: []byte(`{"a":1}`)}}})
	_ = w.Write(&pluginv1.ExecuteInput{Input: &pluginv1.ExecuteInput_Cancel{Cancel: &pluginv1.Cancel{Reason: "x"}}})
	f.Add(buf.Bytes(), uint16(64))
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 1}, uint16(100))
	f.Add([]byte{0, 0, 0, 3, 0x0a, 0x01}, uint16(3))
	f.Fuzz(func(t *testing.T, stream []byte, max uint16) {
		r := NewReader(bytes.NewReader(stream), int(max))
		for {
			b, err := r.Next()
			if err != nil {
				if !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, ErrTooLarge) {
					t.Fatalf("unexpected error %v", err)
				}
				return
			}
			if len(b) > int(max) {
				t.Fatalf("a %d-byte frame passed the %d-byte limit", len(b), max)
			}
			_ = proto.Unmarshal(b, new(pluginv1.ExecuteInput))
			_ = proto.Unmarshal(b, new(pluginv1.ExecuteEvent))
		}
	})
}

// FuzzRead: Read into an ExecuteEvent, as the host reads a plugin's answers, errs cleanly on
// anything that is not one.
//
//	cd sdk/go && go test -run '^$' -fuzz FuzzRead$ -fuzztime 30s ./fastlane
func FuzzRead(f *testing.F) {
	var buf bytes.Buffer
	_ = NewWriter(&buf, MaxFrame).Write(&pluginv1.ExecuteEvent{Event: &pluginv1.ExecuteEvent_Heartbeat{Heartbeat: &pluginv1.Heartbeat{Progress: []byte(`1`)}}})
	f.Add(buf.Bytes())
	f.Add([]byte{0, 0, 0, 2, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, stream []byte) {
		r := NewReader(bytes.NewReader(stream), 1<<12)
		for {
			ev := new(pluginv1.ExecuteEvent)
			if err := r.Read(ev); err != nil {
				return
			}
			if _, err := proto.Marshal(ev); err != nil {
				t.Fatalf("a decoded event does not encode: %v", err)
			}
		}
	})
}

// The body buffer grows with the frames read, so an idle lane that only saw small frames keeps
// a small buffer; frames of growing and shrinking sizes are read back whole.
func TestReaderBufferFitsFrames(t *testing.T) {
	var stream []byte
	sizes := []int{3, 100, minKeep + 1, 5000, 7, keepBytes, 10}
	for i, n := range sizes {
		body := bytes.Repeat([]byte{byte('a' + i)}, n)
		stream = append(append(stream, header(body)...), body...)
	}
	r := NewReader(bytes.NewReader(stream), MaxFrame)
	for i, n := range sizes {
		got, err := r.Next()
		if err != nil || !bytes.Equal(got, bytes.Repeat([]byte{byte('a' + i)}, n)) {
			t.Fatalf("frame %d (%d bytes): %d bytes, %v", i, n, len(got), err)
		}
		if i == 1 && cap(r.buf) > minKeep {
			t.Fatalf("after frames of 3 and 100 bytes the reader keeps %d bytes, want at most %d", cap(r.buf), minKeep)
		}
		if cap(r.buf) > keepBytes {
			t.Fatalf("frame %d: the reader keeps %d bytes, over %d", i, cap(r.buf), keepBytes)
		}
	}
}
