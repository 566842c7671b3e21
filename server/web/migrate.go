package web

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"os"
	"strings"

	"github.com/wendflow/wend/api"
	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/server"
)

// The run page offers to move an open run to its workflow's registered file (wend serve
// --workflows) when that file's version differs from the run's: it shows the replay check's
// verdict (a dry run of POST /v1/runs/{id}/migrate) and, to the act token, a button. The
// file moved to is always the one registered under the run's workflow name, read again at
// the post: the form names only the version the operator saw, never a path.

// moveOffer is what the run page says about moving its run to the registered file.
type moveOffer struct {
	From, To   string // the run's version and the registered file's, sha256 hex
	File       string // the registered file
	Holds      bool   // the file takes every decision the run's history records
	Divergence *api.Divergence
	Err        string // the check could not be made (the file does not load, ...)
}

// FromShort and ToShort are the versions as the page shows them.
func (o *moveOffer) FromShort() string { return short(o.From) }
func (o *moveOffer) ToShort() string   { return short(o.To) }

func short(v string) string { return v[:min(12, len(v))] }

// Parts says where the file and the run's history part, for a person.
func (o *moveOffer) Parts() string {
	d := o.Divergence
	if d == nil {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "at event %d", d.Seq)
	if d.Recorded != "" {
		fmt.Fprintf(&b, " (%s", d.Recorded)
		if d.Step != "" {
			fmt.Fprintf(&b, " of step %s", d.Step)
		}
		b.WriteString(")")
	}
	if d.Decided != "" {
		fmt.Fprintf(&b, " the file decides %s", d.Decided)
		if d.At != "" {
			fmt.Fprintf(&b, " at step %s", d.At)
		}
	}
	b.WriteString(": " + d.Reason)
	return b.String()
}

// readRegistered reads the file registered under the workflow name, with its version.
func (u *UI) readRegistered(name string) (file string, src []byte, version string, err error) {
	for _, w := range u.s.Workflows() {
		if w.Name != name {
			continue
		}
		src, err = os.ReadFile(w.File)
		if err != nil {
			return w.File, nil, "", api.NewError(api.CodeBadWorkflow, fmt.Sprintf("the registered file of %s cannot be read: %v", name, err))
		}
		sum := sha256.Sum256(src)
		return w.File, src, hex.EncodeToString(sum[:]), nil
	}
	return "", nil, "", api.NewError(api.CodeNotFound, fmt.Sprintf("workflow %s is not registered: wend serve --workflows DIR offers a run the move to its workflow's file in DIR", name))
}

// offerMove checks the open run against its workflow's registered file when that file is
// another version; nil when there is nothing to offer.
func (u *UI) offerMove(ctx context.Context, run history.Run) *moveOffer {
	if !run.Open() || run.NeverStarted() {
		return nil
	}
	file, src, version, err := u.readRegistered(run.Name)
	if file == "" || version == run.SpecSHA256 {
		return nil
	}
	o := &moveOffer{From: run.SpecSHA256, To: version, File: file}
	if err != nil {
		o.Err = server.ErrorOf(err).Message
		return o
	}
	res, err := u.s.Migrate(ctx, run.WorkflowID, api.MigrateRequest{File: file, Source: string(src), DryRun: true})
	switch {
	case err != nil:
		o.Err = server.ErrorOf(err).Message
	case res.Run.RunID != run.RunID: // the workflow id has a newer run now
		return nil
	default:
		o.Holds, o.Divergence = res.Divergence == nil, res.Divergence
	}
	return o
}

// migrate is the run page's move button: the run goes to its workflow's registered file if
// that file is still the version the page showed ("to") and the replay check holds.
func (u *UI) migrate(r *http.Request, id string) error {
	run, err := u.s.Resolve(id)
	if err != nil {
		return err
	}
	file, src, version, err := u.readRegistered(run.Name)
	if err != nil {
		return err
	}
	if to := r.PostForm.Get("to"); to != version {
		return conflict(fmt.Sprintf("the registered file of %s is version %s now, not the version %s the page showed: look at the check again", run.Name, short(version), short(to)))
	}
	res, err := u.s.Migrate(r.Context(), id, api.MigrateRequest{File: file, Source: string(src), By: server.Requester(r, "")})
	if err != nil {
		return err
	}
	if res.Divergence != nil {
		o := moveOffer{Divergence: res.Divergence}
		return conflict("the run stays on its version: the registered file parts from its history " + o.Parts())
	}
	return nil
}

// conflict is a move refused for what the file or the run is now (409).
func conflict(msg string) error {
	return &api.Error{Status: http.StatusConflict, Code: api.CodeBadWorkflow, Message: msg}
}
