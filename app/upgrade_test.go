package app

import (
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A database an older wend wrote is upgraded at open, and the one who opened it is told how
// it goes, to its end.
func TestOpenStoreTellsTheUpgrade(t *testing.T) {
	in, err := os.Open("../boltstore/testdata/schema1.db.gz") // written by the store's first layout
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	zr, err := gzip.NewReader(in)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "wend.db")
	out, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, zr); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
	var told []string
	st, err := OpenStore(path, func(format string, args ...any) { told = append(told, fmt.Sprintf(format, args...)) })
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if len(told) == 0 {
		t.Fatal("the upgrade told nothing")
	}
	last := told[len(told)-1]
	var seen, total, moved int
	if _, err := fmt.Sscanf(last, "upgrading the database to this wend's layout: %d of %d runs looked at, %d moved", &seen, &total, &moved); err != nil {
		t.Fatalf("last line %q: %v", last, err)
	}
	if total == 0 || seen != total {
		t.Errorf("the last line is not the upgrade's end: %q", strings.Join(told, "\n"))
	}

	// Opened again, the file is of the current layout: nothing to tell.
	st.Close()
	told = nil
	st2, err := OpenStore(path, func(format string, args ...any) { told = append(told, fmt.Sprintf(format, args...)) })
	if err != nil {
		t.Fatal(err)
	}
	defer st2.Close()
	if len(told) != 0 {
		t.Errorf("an upgraded file told %q at its next open", told)
	}
}
