package spec

import (
	"fmt"
	"regexp"

	"go.yaml.in/yaml/v3"
)

// Secret is a credential the workflow declares (`secrets: {api_token: {env: API_TOKEN}}`).
// Its value is never part of a run: an activity's `with` holds the reference
// `${{ secrets.NAME }}` as text, the history records that text, and the plugin host puts the
// value in just before it calls the plugin.
type Secret struct {
	Name string
	Env  string // the host's environment variable holding the value; or
	File string // a file holding it (a relative path is relative to the workflow file)
	Pos  Pos
}

var secretRefPattern = regexp.MustCompile(`^secrets\.([A-Za-z_][A-Za-z0-9_]*)$`)

// secretRef reports whether an expression's source is a secret reference, and its name.
func secretRef(src string) (string, bool) {
	m := secretRefPattern.FindStringSubmatch(src)
	if m == nil {
		return "", false
	}
	return m[1], true
}

// SecretRef is the text that stands for secret name in an evaluated `with`, and in the
// history: the reference as the workflow writes it.
func SecretRef(name string) string { return "${{ secrets." + name + " }}" }

func (d *decoder) secrets(w *Workflow, n *yaml.Node) {
	if n.Kind != yaml.MappingNode {
		return
	}
	w.Secrets = map[string]*Secret{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		s := &Secret{Name: k.Value, Pos: posOf(k)}
		path := "secrets." + k.Value
		d.fields(v, path, []string{"env", "file"}, func(key string, _, v2 *yaml.Node) {
			switch key {
			case "env":
				s.Env = str(v2)
			case "file":
				s.File = str(v2)
			}
		})
		if (s.Env == "") == (s.File == "") {
			d.errorf(v, path, "want exactly one of env (a variable's name) or file (a path)")
		}
		w.Secrets[s.Name] = s
		w.SecretOrder = append(w.SecretOrder, s.Name)
	}
}

// refuseSecrets refuses v's secret references: they are allowed in an activity's `with` only,
// since anywhere else the value would be recorded in the history.
func (c *checker) refuseSecrets(v *Value) {
	for _, name := range v.Secrets() {
		c.errorf(v.Pos, v.Path, "secrets.%s: a secret may be used only in an activity's `with`; here its value would be recorded in the history", name)
	}
}

// activitySecrets checks that the secrets an activity's `with` references are declared.
func (c *checker) activitySecrets(v *Value) {
	for _, name := range v.Secrets() {
		if _, ok := c.w.Secrets[name]; ok {
			continue
		}
		msg := fmt.Sprintf("secret %q is not declared under secrets", name)
		if s := suggest(name, c.w.SecretOrder); s != "" {
			msg += fmt.Sprintf(" (did you mean %q?)", s)
		} else {
			msg += "; declare it, e.g. secrets: {" + name + ": {env: " + upperSnake(name) + "}}"
		}
		c.errorf(v.Pos, v.Path, "%s", msg)
	}
}

func upperSnake(s string) string {
	b := []byte(s)
	for i, ch := range b {
		if ch >= 'a' && ch <= 'z' {
			b[i] = ch - 'a' + 'A'
		}
	}
	return string(b)
}
