package inputfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRead: a regular file is read whole up to the limit, and a link to one is followed;
// anything else is refused at once by what it is, before a byte is read, so a device that
// never ends or a FIFO with no writer costs nothing.
func TestRead(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	small := write("small.yaml", "wend: v1\n")
	big := write("big.yaml", strings.Repeat("x", 101))
	link := filepath.Join(dir, "link.yaml")
	if err := os.Symlink(small, link); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, path string
		want       string // content, or "" for an error
		check      func(error) bool
	}{
		{"regular file", small, "wend: v1\n", nil},
		{"link to a regular file", link, "wend: v1\n", nil},
		{"at the limit", write("exact.yaml", strings.Repeat("y", 100)), strings.Repeat("y", 100), nil},
		{"over the limit", big, "", func(err error) bool {
			var e *TooBigError
			return errors.As(err, &e) && e.Size == 101 && e.Limit == 100 && err.Error() == big+" is 101 bytes, over the 100-byte limit"
		}},
		{"directory", dir, "", func(err error) bool {
			var e *NotRegularError
			return errors.As(err, &e) && e.Kind == "a directory"
		}},
		{"missing", filepath.Join(dir, "nope.yaml"), "", func(err error) bool { return errors.Is(err, fs.ErrNotExist) }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b, err := Read(c.path, 100)
			if c.check == nil {
				if err != nil || string(b) != c.want {
					t.Fatalf("Read = %q, %v; want %q", b, err, c.want)
				}
				return
			}
			if err == nil || !c.check(err) {
				t.Fatalf("Read = %d bytes, %v; want the refusal", len(b), err)
			}
		})
	}
}

func TestReadAllRefusesOverLimit(t *testing.T) {
	if b, err := ReadAll(strings.NewReader("12345"), "standard input", 5); err != nil || string(b) != "12345" {
		t.Fatalf("at the limit: %q, %v", b, err)
	}
	_, err := ReadAll(strings.NewReader("123456"), "standard input", 5)
	var e *TooBigError
	if !errors.As(err, &e) || err.Error() != "standard input is 6 bytes, over the 5-byte limit" {
		t.Fatalf("over the limit: %v", err)
	}
}
