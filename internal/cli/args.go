package cli

import (
	"flag"
	"io"
	"strings"
)

// parseArgs parses flags anywhere among the arguments (`wend validate dir --json` works as
// well as `wend validate --json dir`) and returns the positional ones. "--" ends the flags.
func parseArgs(fs *flag.FlagSet, args []string) ([]string, error) {
	fs.SetOutput(io.Discard)
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
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
