package commands

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

	"github.com/wendflow/wend/testkit/secretforms"
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

// cmdNoSecretForms is nosecret for every common encoding of the secret in file (its
// trailing newline dropped, as wend reads a secret file), written by secretforms:
//
//	nosecretforms pw.txt $WORK/db stdout stderr
func cmdNoSecretForms(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: nosecretforms FILE PATH...")
	}
	value := strings.TrimRight(ts.ReadFile(args[0]), "\r\n")
	for _, enc := range secretforms.Encodings {
		form, err := secretforms.Encode(value, enc)
		ts.Check(err)
		j, _ := json.Marshal(form)
		for _, text := range []string{form, string(j[1 : len(j)-1])} {
			ts.Logf("%s: %s", enc, text)
			cmdNoSecret(ts, false, append([]string{text}, args[1:]...))
		}
	}
}

// cmdLeakyAPI starts a service that gives back the token it is sent, for the rest of the
// script, and sets $LEAKY_API to its URL. With `Authorization: Bearer TOKEN` (TOKEN from
// file), /leak answers a text body holding the token in every encoding secretforms knows,
// /fail the same with status 500, and /echo what it got in its q parameter and X-Note header.
//
//	leakyapi pw.txt
func cmdLeakyAPI(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: leakyapi FILE")
	}
	srv, err := newLeakyAPI(strings.TrimRight(ts.ReadFile(args[0]), "\r\n"))
	ts.Check(err)
	ts.Defer(srv.Close)
	ts.Setenv("LEAKY_API", srv.URL)
}

// newLeakyAPI is leakyapi's service, for token.
func newLeakyAPI(token string) (*httptest.Server, error) {
	var leak strings.Builder
	for _, enc := range secretforms.Encodings {
		form, err := secretforms.Encode(token, enc)
		if err != nil {
			return nil, err
		}
		leak.WriteString(enc + ": " + form + "\n")
	}
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/echo":
			w.Header().Set("Content-Type", "application/json")
			_ = json.NewEncoder(w).Encode(map[string]string{"q": r.URL.Query().Get("q"), "note": r.Header.Get("X-Note")})
		case r.Header.Get("Authorization") != "Bearer "+token:
			http.Error(w, "bad token", http.StatusUnauthorized)
		case r.URL.Path == "/leak":
			_, _ = w.Write([]byte(leak.String()))
		case r.URL.Path == "/fail":
			w.WriteHeader(http.StatusInternalServerError)
			_, _ = w.Write([]byte(leak.String()))
		default:
			http.NotFound(w, r)
		}
	})), nil
}
