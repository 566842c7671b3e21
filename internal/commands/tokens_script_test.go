package commands

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
)

// cmdFreePort sets the variable it names to a loopback port free a moment ago, so a script
// knows where a background wend serve listens:
//
//	freeport PORT
func cmdFreePort(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: freeport NAME")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	ts.Check(err)
	port := ln.Addr().(*net.TCPAddr).Port
	ts.Check(ln.Close())
	ts.Setenv(args[0], strconv.Itoa(port))
}

// cmdHTTPCall sends one request and writes the answer's status, then its body, to stdout;
// the token, when given, is read from a file and sent as a bearer token. It waits (30
// seconds at most) for a listener that is not up yet:
//
//	httpcall GET http://127.0.0.1:$PORT/v1/runs [TOKENFILE]
func cmdHTTPCall(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 || len(args) > 3 {
		ts.Fatalf("usage: httpcall METHOD URL [TOKENFILE]")
	}
	var token string
	if len(args) == 3 {
		b, err := os.ReadFile(ts.MkAbs(args[2]))
		ts.Check(err)
		token = strings.TrimSpace(string(b))
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		req, err := http.NewRequest(args[0], args[1], nil)
		ts.Check(err)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if errors.Is(err, syscall.ECONNREFUSED) && time.Now().Before(deadline) {
			time.Sleep(100 * time.Millisecond)
			continue
		}
		ts.Check(err)
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		ts.Check(err)
		fmt.Fprintf(ts.Stdout(), "%d\n%s\n", resp.StatusCode, b)
		return
	}
}
