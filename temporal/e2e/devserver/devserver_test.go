package devserver

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"go.temporal.io/sdk/client"
)

// TestStartRegistersNamespaceAndKeepsFileState starts a server on a file, checks a client
// can use the namespace at once, stops it, and starts again on the same file: the
// namespace and the workflow started before survive (the schema is not created twice).
func TestStartRegistersNamespaceAndKeepsFileState(t *testing.T) {
	db := filepath.Join(t.TempDir(), "t.db")
	srv, err := Start(Options{DBFile: db})
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.Dial(client.Options{HostPort: srv.Addr(), Namespace: srv.Namespace()})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "kept", TaskQueue: "none"}, "nobody.runs.this"); err != nil {
		t.Fatal(err)
	}
	c.Close()
	if err := srv.Stop(); err != nil {
		t.Fatal(err)
	}

	srv, err = Start(Options{DBFile: db})
	if err != nil {
		t.Fatalf("restart on the same file: %v", err)
	}
	defer srv.Stop()
	c, err = client.Dial(client.Options{HostPort: srv.Addr(), Namespace: srv.Namespace()})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	d, err := c.DescribeWorkflowExecution(ctx, "kept", "")
	if err != nil {
		t.Fatalf("the run started before the restart is gone: %v", err)
	}
	if got := d.WorkflowExecutionInfo.Type.Name; got != "nobody.runs.this" {
		t.Fatalf("workflow type = %q", got)
	}
}

// TestStartTemporaryDatabaseRemovedOnStop: without a file the state lives in a temporary
// directory that Stop removes.
func TestStartTemporaryDatabaseRemovedOnStop(t *testing.T) {
	srv, err := Start(Options{})
	if err != nil {
		t.Fatal(err)
	}
	dir := srv.tmpDir
	if _, err := os.Stat(filepath.Join(dir, "temporal.db")); err != nil {
		t.Fatalf("no database in the temporary directory: %v", err)
	}
	if err := srv.Stop(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("temporary directory %s left behind (stat: %v)", dir, err)
	}
}

// TestStartBadInputsNameTheProblem: a taken port, a missing directory and a file that is
// not a database each fail with an error naming it, and leave nothing running.
func TestStartBadInputsNameTheProblem(t *testing.T) {
	srv, err := Start(Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	_, port, _ := strings.Cut(srv.Addr(), ":")
	n, _ := strconv.Atoi(port)
	notDB := filepath.Join(t.TempDir(), "notes.txt")
	if err := os.WriteFile(notDB, []byte("not a database, just text that is long enough to be read as a header"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		opts Options
		want string
	}{
		{"port taken", Options{Port: n}, "frontend port " + port},
		{"missing directory", Options{DBFile: "/nonexistent-dir/x.db"}, "directory /nonexistent-dir does not exist"},
		{"not a database", Options{DBFile: notDB}, notDB},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Start(tc.opts)
			if err == nil {
				s.Stop()
				t.Fatal("started")
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %q does not name %q", err, tc.want)
			}
		})
	}
}
