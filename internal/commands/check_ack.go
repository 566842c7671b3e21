package commands

import (
	"errors"
	"fmt"
	"os"
	"os/user"

	"github.com/wendflow/wend/boltstore"
)

// acknowledgeLogLoss records, in the database at path, that the operator running this command
// knows it went on without its write-ahead log (boltstore.AcknowledgeLogLoss). It writes, so
// the database must not be held by another process: the acknowledgment is made while nothing
// else writes.
func acknowledgeLogLoss(e *env, path string) error {
	if _, err := os.Stat(path); err != nil {
		return fmt.Errorf("no database at %s", path)
	}
	st, err := openStore(path)
	if errors.Is(err, boltstore.ErrInUse) {
		return fmt.Errorf("acknowledge the log loss: %w; stop it, then run wend check --acknowledge-log-loss again", err)
	}
	if err != nil {
		return err
	}
	ack, err := st.AcknowledgeLogLoss(operator(e))
	if cerr := st.Close(); err == nil && cerr != nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stderr, "wend check: log loss %s\n", ack)
	return nil
}

// operator names who runs this command: user@host, as far as the system tells.
func operator(e *env) string {
	name := e.getenv("USER")
	if u, err := user.Current(); err == nil && u.Username != "" {
		name = u.Username
	}
	if name == "" {
		name = "unknown user"
	}
	if host, err := os.Hostname(); err == nil && host != "" {
		name += "@" + host
	}
	return name
}
