package arch

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// sdkDir is the Go plugin SDK's module, nested in the repository: the main module's ./... does
// not reach it, so its packages are listed from there.
const sdkDir = "../../sdk/go"

// sdkPackages lists the packages of the SDK's module, which TestLayering holds to the same
// rules as the main module's.
func sdkPackages(t *testing.T) []pkg {
	t.Helper()
	cmd := exec.Command("go", "list", "-json=ImportPath,Dir,GoFiles,Imports", "./...")
	cmd.Dir = sdkDir
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list ./... in sdk/go: %v", err)
	}
	var pkgs []pkg
	dec := json.NewDecoder(bytes.NewReader(out))
	for dec.More() {
		var p pkg
		if err := dec.Decode(&p); err != nil {
			t.Fatalf("go list output: %v", err)
		}
		pkgs = append(pkgs, p)
		touch(p)
	}
	if len(pkgs) < 4 {
		t.Fatalf("go list found only %d packages in sdk/go", len(pkgs))
	}
	return pkgs
}

// TestSDKModuleLeavesWendsDependencies checks what a Go plugin's go.sum inherits from the SDK:
// no module the main module requires directly for itself (the store, the UI's browser tests,
// metrics, tracing, the language) may appear in sdk/go/go.sum, only those the SDK's go.mod
// requires too (go-plugin, gRPC, protobuf and what they need).
func TestSDKModuleLeavesWendsDependencies(t *testing.T) {
	mainReqs := requires(t, "../..")
	sdkReqs := requires(t, sdkDir)
	var banned []string
	for path, indirect := range mainReqs {
		if _, ok := sdkReqs[path]; !ok && !indirect && path != module+"/sdk/go" {
			banned = append(banned, path)
		}
	}
	// The heavy ones the SDK module exists to keep out must be among those checked.
	for _, heavy := range []string{bbolt, prometheus, "github.com/chromedp/chromedp", otel} {
		if !slices.Contains(banned, heavy) {
			t.Fatalf("%s is not a direct requirement of the main module only; the check lost its subject (checked: %v)", heavy, banned)
		}
	}
	f, err := os.Open(sdkDir + "/go.sum")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		path, _, _ := strings.Cut(sc.Text(), " ")
		if slices.Contains(banned, path) {
			t.Errorf("sdk/go/go.sum:%d: %s, a dependency of wend's, reaches every Go plugin's go.sum: keep the SDK's packages off the main module's", n, path)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
}

// requires reads the require lines of the go.mod in dir: module path to whether it is indirect.
func requires(t *testing.T, dir string) map[string]bool {
	t.Helper()
	cmd := exec.Command("go", "mod", "edit", "-json")
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go mod edit -json in %s: %v", dir, err)
	}
	var mod struct {
		Require []struct {
			Path     string
			Indirect bool
		}
	}
	if err := json.Unmarshal(out, &mod); err != nil {
		t.Fatalf("go mod edit -json in %s: %v", dir, err)
	}
	reqs := map[string]bool{}
	for _, r := range mod.Require {
		reqs[r.Path] = r.Indirect
	}
	return reqs
}
