package commands

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/wendflow/wend/app"
	"github.com/wendflow/wend/boltstore"
)

// defaultDB is where the database lives unless --db or WEND_DB says otherwise.
const defaultDB = ".wend/wend.db"

// dbFlag registers --db on fs; the value is resolved by dbPath.
func dbFlag(fs *flag.FlagSet) *string {
	return fs.String("db", "", "")
}

func dbPath(e *env, flagVal string) string {
	p := flagVal
	if p == "" {
		p = e.getenv("WEND_DB")
	}
	if p == "" {
		p = defaultDB
	}
	if abs, err := filepath.Abs(p); err == nil {
		return abs
	}
	return p
}

func openStore(path string) (*boltstore.Store, error) { return app.OpenStore(path, stderrLog) }

// stderrLog tells the user of a command what a long open does (an upgrade of the file's layout).
func stderrLog(format string, args ...any) { fmt.Fprintf(os.Stderr, "wend: "+format+"\n", args...) }
