package interpreter

import (
	"path/filepath"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/spec"
)

// SecretRefs lists where w's declared secrets are, in file order, a relative file resolved
// against dir (the workflow file's folder). A call carries these and never a value: the host
// that runs the plugin reads each one, so both engines keep secrets out of their histories.
func SecretRefs(w *spec.Workflow, dir string) []history.SecretRef {
	var refs []history.SecretRef
	for _, name := range w.SecretOrder {
		s := w.Secrets[name]
		ref := history.SecretRef{Name: name, Env: s.Env, File: s.File}
		if ref.File != "" && !filepath.IsAbs(ref.File) {
			ref.File = filepath.Join(dir, ref.File)
		}
		refs = append(refs, ref)
	}
	return refs
}
