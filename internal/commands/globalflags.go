package commands

import (
	"fmt"
	"strings"
)

// globalFlags may come before the command: `wend --db X list` is `wend list --db X`. They are
// the flags that pick where a command works (this machine's database or a Temporal cluster),
// which every command that touches runs takes.
var globalFlags = []string{"db", "temporal", "namespace", "task-queue"}

// hoistGlobalFlags moves global flags given before the command to just after it, where the
// command's own flag parsing reads them. Anything else before the command is an error:
// guessing would run the wrong thing.
func hoistGlobalFlags(args []string) ([]string, error) {
	var flags []string
	i := 0
	for ; i < len(args); i++ {
		a := args[i]
		if !strings.HasPrefix(a, "-") || a == "-" || isHelpOrVersion(a) {
			break
		}
		name, _, hasValue := flagParts(a)
		if !isGlobalFlag(name) {
			return nil, fmt.Errorf("flag %s before the command is not a global flag (%s); put it after the command",
				a, "--"+strings.Join(globalFlags, ", --"))
		}
		flags = append(flags, a)
		if !hasValue {
			if i+1 == len(args) {
				return nil, fmt.Errorf("flag needs an argument: %s", a)
			}
			i++
			flags = append(flags, args[i])
		}
	}
	if len(flags) == 0 {
		return args, nil
	}
	if i == len(args) {
		return nil, fmt.Errorf("no command after %s", strings.Join(flags, " "))
	}
	if args[i] == "help" { // help says the same whatever the database
		return args[i:], nil
	}
	out := make([]string, 0, len(args))
	out = append(out, args[i])
	out = append(out, flags...)
	return append(out, args[i+1:]...), nil
}

func isGlobalFlag(name string) bool {
	for _, g := range globalFlags {
		if name == g {
			return true
		}
	}
	return false
}

func isHelpOrVersion(a string) bool {
	switch a {
	case "-h", "--help", "-help", "--version", "-version":
		return true
	}
	return false
}
