package cli

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"

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

// cmdOrderAPI starts the order service examples/fetch-order.wend.yaml calls, for the rest of
// the script, and sets $ORDER_API to its URL. It wants `Authorization: Bearer TOKEN` and
// echoes that header back in its answer, so a test sees a plugin echo a secret.
//
//	orderapi s3cr3t
func cmdOrderAPI(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: orderapi TOKEN")
	}
	want := "Bearer " + args[0]
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != want {
			http.Error(w, "bad token", http.StatusUnauthorized)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]string{"id": strings.TrimPrefix(r.URL.Path, "/orders/"),
			"status": "shipped", "seen_authorization": r.Header.Get("Authorization")})
	}))
	ts.Defer(srv.Close)
	ts.Setenv("ORDER_API", srv.URL)
}
