package cli

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/rogpeppe/go-internal/testscript"
)

// cmdNoSecret fails when any file under the given paths (folders walked) holds the text:
//
//	nosecret s3cr3t $WORK/db stdout stderr
//
// stdout and stderr name the last command's output.
func cmdNoSecret(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: nosecret TEXT PATH...")
	}
	secret := []byte(args[0])
	for _, p := range args[1:] {
		switch p {
		case "stdout", "stderr":
			if bytes.Contains([]byte(ts.ReadFile(p)), secret) {
				ts.Fatalf("the secret is in %s", p)
			}
			continue
		}
		err := filepath.WalkDir(ts.MkAbs(p), func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			if bytes.Contains(b, secret) {
				ts.Fatalf("the secret is in %s", path)
			}
			return nil
		})
		ts.Check(err)
	}
}
