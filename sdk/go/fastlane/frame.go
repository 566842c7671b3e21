package fastlane

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sync"

	"google.golang.org/protobuf/proto"

	"github.com/wendflow/wend/sdk/go/wire"
)

// A frame is a 4-byte big-endian length followed by that many bytes: one protobuf message, or
// in the handshake the raw token (host to plugin) and an empty acknowledgement (plugin to host).

// MaxFrame bounds a frame's body both ways: the gRPC message limit host and SDK set
// (wire.MaxMessageBytes), so a fast lane accepts exactly what a gRPC lane would.
const MaxFrame = wire.MaxMessageBytes

const headerBytes = 4

// keepBytes is the largest body buffer a Reader keeps between frames; a larger frame gets a
// buffer of its own, so one big message does not pin its size to the lane.
const keepBytes = 64 << 10

// minKeep is the smallest body buffer a Reader makes.
const minKeep = 512

// ErrTooLarge is wrapped by the error for a frame over the limit, on either side; ErrBadFrame
// by the error for a frame that is not the message expected.
var (
	ErrTooLarge = errors.New("frame over the size limit")
	ErrBadFrame = errors.New("bad frame")
)

// Reader reads frames from a stream; one goroutine at a time.
type Reader struct {
	r   *bufio.Reader
	max int
	hdr [headerBytes]byte
	buf []byte
}

// NewReader reads frames of at most max bytes from r.
func NewReader(r io.Reader, max int) *Reader {
	return &Reader{r: bufio.NewReaderSize(r, 4096), max: max}
}

// SetMax changes the limit, as after the handshake.
func (fr *Reader) SetMax(max int) { fr.max = max }

// Next returns the next frame's body, valid until the next call. A stream that ends between
// frames gives io.EOF; one that ends inside a frame io.ErrUnexpectedEOF. The length is checked
// against the limit before anything is allocated.
func (fr *Reader) Next() ([]byte, error) {
	if _, err := io.ReadFull(fr.r, fr.hdr[:]); err != nil {
		return nil, err
	}
	n := binary.BigEndian.Uint32(fr.hdr[:])
	if uint64(n) > uint64(fr.max) {
		return nil, fmt.Errorf("fast lane: a %d-byte frame: %w of %d bytes", n, ErrTooLarge, fr.max)
	}
	var b []byte
	if int(n) <= keepBytes {
		if cap(fr.buf) < int(n) {
			// Grown to fit, not to keepBytes at once: a host keeps hundreds of idle lanes,
			// and most frames are a few hundred bytes.
			fr.buf = make([]byte, n, min(keepBytes, max(int(n), 2*cap(fr.buf), minKeep)))
		}
		b = fr.buf[:n]
	} else {
		b = make([]byte, n)
	}
	if _, err := io.ReadFull(fr.r, b); err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	return b, nil
}

// Read reads the next frame into m. proto.Unmarshal copies what it keeps, so the buffer is
// reused safely.
func (fr *Reader) Read(m proto.Message) error {
	b, err := fr.Next()
	if err != nil {
		return err
	}
	if err := proto.Unmarshal(b, m); err != nil {
		return fmt.Errorf("fast lane: %w: not a %s: %w", ErrBadFrame, m.ProtoReflect().Descriptor().FullName(), err)
	}
	return nil
}

// Writer writes frames to a stream; safe for concurrent use (a host's Cancel may be sent while
// another goroutine waits for events, a plugin's heartbeat while its try ends).
type Writer struct {
	mu  sync.Mutex
	w   io.Writer
	max int
	buf []byte
}

// NewWriter writes frames of at most max bytes to w.
func NewWriter(w io.Writer, max int) *Writer { return &Writer{w: w, max: max} }

// Write sends m as one frame, in one write.
func (fw *Writer) Write(m proto.Message) error {
	fw.mu.Lock()
	defer fw.mu.Unlock()
	b, err := proto.MarshalOptions{}.MarshalAppend(append(fw.buf[:0], 0, 0, 0, 0), m)
	if err != nil {
		return fmt.Errorf("fast lane: encode %s: %w", m.ProtoReflect().Descriptor().FullName(), err)
	}
	if cap(b) <= keepBytes {
		fw.buf = b
	}
	return fw.send(b)
}

// WriteRaw sends body as one frame.
func (fw *Writer) WriteRaw(body []byte) error {
	fw.mu.Lock()
	defer fw.mu.Unlock()
	return fw.send(append(append(fw.buf[:0], 0, 0, 0, 0), body...))
}

// send writes b, a frame whose first 4 bytes are left for its length.
func (fw *Writer) send(b []byte) error {
	n := len(b) - headerBytes
	if n > fw.max {
		return fmt.Errorf("fast lane: a %d-byte message: %w of %d bytes", n, ErrTooLarge, fw.max)
	}
	binary.BigEndian.PutUint32(b, uint32(n))
	_, err := fw.w.Write(b)
	return err
}
