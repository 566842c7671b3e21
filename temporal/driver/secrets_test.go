package driver

import (
	"slices"
	"testing"

	"github.com/wendflow/wend/history"
)

// A try on Temporal carries where the workflow's secrets are, relative files resolved against
// the workflow file's folder, so the worker's plugin host can read them, and the places its
// template put a reference: not the same text that came in the run's input. The input keeps
// the reference text and the history never holds a value.
func TestCallCarriesSecretLocations(t *testing.T) {
	src := `wend: v1
name: t
plugins: {p: ./p}
secrets:
  token: {env: API_TOKEN}
  pass: {file: secrets/pass}
  abs: {file: /run/secrets/abs}
steps:
  - id: a
    activity: p.echo
    with: {auth: "Bearer ${{ secrets.token }}", note: "${{ input.note }}"}
`
	e, p := newEnv(t)
	run(t, e, startInput(src, map[string]any{"note": "${{ secrets.token }}"}, nil))
	tries := p.triesOf("echo")
	if len(tries) != 1 {
		t.Fatalf("%d tries", len(tries))
	}
	want := []history.SecretRef{{Name: "token", Env: "API_TOKEN"}, {Name: "pass", File: "/flows/secrets/pass"}, {Name: "abs", File: "/run/secrets/abs"}}
	if got := tries[0].Call.Secrets; !slices.Equal(got, want) {
		t.Errorf("call secrets %+v, want %+v", got, want)
	}
	if in := string(tries[0].Call.Input); in != `{"auth":"Bearer ${{ secrets.token }}","note":"${{ secrets.token }}"}` {
		t.Errorf("call input %s, want the reference text", in)
	}
	places := tries[0].Call.SecretPlaces
	if len(places) != 1 || !slices.Equal(places[0].Path, []string{"auth"}) || places[0].Name != "token" || places[0].Offset != len("Bearer ") {
		t.Errorf("call secret places %+v, want token at byte 7 of auth only", places)
	}
}
