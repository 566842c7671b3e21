package commands

import (
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/wendflow/wend/spec"
)

// parseArgs parses flags anywhere among the arguments (`wend validate dir --json` works as
// well as `wend validate --json dir`) and returns the positional ones. "--" ends the flags.
func parseArgs(fs *flag.FlagSet, args []string) ([]string, error) {
	fs.SetOutput(io.Discard)
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, withFlagHint(fs, err)
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		if rest[0] == "--" && (len(args) == 0 || args[len(args)-len(rest)] == "--") {
			return append(pos, rest[1:]...), nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

// flagError makes flag's messages read like ours: "flag provided but not defined: -x".
func flagError(err error) string {
	return strings.TrimPrefix(err.Error(), "flag: ")
}

// undefinedFlag is the start of flag's message for a flag the set does not define.
const undefinedFlag = "flag provided but not defined: -"

// withFlagHint adds the closest defined flag to an unknown flag's error:
// "flag provided but not defined: -inptu (did you mean --input?)".
func withFlagHint(fs *flag.FlagSet, err error) error {
	name, ok := strings.CutPrefix(err.Error(), undefinedFlag)
	if !ok {
		return err
	}
	name = strings.TrimLeft(name, "-")
	var names []string
	fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
	if s := spec.Closest(name, names); s != "" {
		return fmt.Errorf("%w (did you mean --%s?)", err, s)
	}
	return err
}
