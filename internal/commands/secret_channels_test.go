package commands

import (
	"encoding/json"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wendflow/wend/testkit/secretforms"
)

// channelSecret has what breaks naive masking: quotes, a backslash, URL and base64
// specials, a non-ASCII letter.
const channelSecret = `p@ss w"rd/\x%2F+?&=#:é-0123456789`

const e2eLeak = `wend: v1
name: leak
secrets: {pw: {file: pw.txt}}
plugins: {web: {builtin: http}}
steps:
  - id: leak
    activity: web.request
    with:
      url: "${{ input.api }}/${{ input.path }}"
      headers: {Authorization: "Bearer ${{ secrets.pw }}"}
    retry: {tries: 1}
    set: {said: "${{ output.body }}"}
output: "${{ steps.leak.output.body }}"
`

// e2ePlug has the test plugin give the secret back as each case asks (encoding, channel:
// output, error, heartbeat or stderr); a failed case is caught, so the run completes.
const e2ePlug = `wend: v1
name: plug
secrets: {pw: {file: pw.txt}}
plugins: {tp: ./tp}
steps:
  - for_each: "${{ input.cases }}"
    steps:
      - activity: tp.leak
        with: {secret: "${{ secrets.pw }}", encoding: "${{ item.enc }}", channel: "${{ item.ch }}"}
        retry: {tries: 1}
        catch: {steps: [], set: {caught: true}}
`

// TestSecretEncodingsEveryChannel runs a real wend serve whose plugin gives a secret back in
// every common encoding, in a result and in a failure, and looks for each encoding in every
// place wend keeps or shows a run: the API's run (with its state) and events, the export,
// the UI page, serve's log with its console traces, and every file of the database.
func TestSecretEncodingsEveryChannel(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs wend serve")
	}
	api, err := newLeakyAPI(channelSecret)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(api.Close)
	t.Setenv("OTEL_TRACES_EXPORTER", "console")
	s := startServe(t, map[string]string{"leak.wend.yaml": e2eLeak, "pw.txt": channelSecret + "\n"})
	if err := os.Symlink(buildTestPlugin(t, "dev"), filepath.Join(s.dir, "tp")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(s.dir, "plug.wend.yaml"), []byte(e2ePlug), 0o644); err != nil {
		t.Fatal(err)
	}
	runs := map[string]string{"ok": "leak", "fail": "fail"}
	for id, path := range runs {
		s.start(id, "leak.wend.yaml", `{"api": "`+api.URL+`", "path": "`+path+`"}`)
	}
	var cases []map[string]string
	for _, enc := range secretforms.Encodings {
		for _, ch := range []string{"output", "error", "heartbeat", "stderr"} {
			cases = append(cases, map[string]string{"enc": enc, "ch": ch})
		}
	}
	in, _ := json.Marshal(map[string]any{"cases": cases})
	s.start("plug", "plug.wend.yaml", string(in))
	runs["plug"] = ""
	s.waitStatus("ok", "completed", time.Minute)
	s.waitStatus("fail", "failed", time.Minute)
	s.waitStatus("plug", "completed", time.Minute)

	channels := map[string][]byte{}
	for id := range runs {
		for _, p := range []string{"/v1/runs/" + id, "/v1/runs/" + id + "/events", "/v1/runs/" + id + "/export", "/ui/runs/" + id} {
			channels[p] = s.get(p)
		}
	}
	if !strings.Contains(string(channels["/v1/runs/ok"]), `"said"`) {
		t.Fatalf("the run's state holds no step output: %s", channels["/v1/runs/ok"])
	}
	s.stop()
	channels["serve's log and traces"] = s.logs.Bytes()
	if !strings.Contains(s.logs.String(), "before *** after") {
		t.Fatalf("serve's log has no masked stderr line of the plugin:\n%s", s.logs)
	}
	if !strings.Contains(s.logs.String(), "TraceID") && !strings.Contains(s.logs.String(), "trace_id") && !strings.Contains(s.logs.String(), "SpanContext") {
		t.Fatalf("serve printed no console traces:\n%s", s.logs)
	}
	err = filepath.WalkDir(filepath.Join(s.dir, "db"), func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		channels["db file "+filepath.Base(path)] = b
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	for name, got := range channels {
		if len(got) == 0 {
			t.Errorf("%s: empty", name)
		}
		for _, enc := range secretforms.Encodings {
			form, err := secretforms.Encode(channelSecret, enc)
			if err != nil {
				t.Fatal(err)
			}
			j, _ := json.Marshal(form)
			for _, text := range []string{form, string(j[1 : len(j)-1])} {
				if strings.Contains(string(got), text) {
					t.Errorf("%s holds the secret %s: %q", name, enc, text)
				}
			}
		}
	}
}

// get reads path with the token; a status other than 200 fails the test.
func (s *liveServe) get(path string) []byte {
	s.t.Helper()
	req, _ := http.NewRequest("GET", s.base+path, nil)
	req.Header.Set("Authorization", "Bearer "+e2eToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		s.t.Fatalf("GET %s: %d %v %s", path, resp.StatusCode, err, b)
	}
	return b
}
