package commands

import (
	"fmt"
	"io"
	"regexp"
	"sort"
	"strings"
)

var completionCmd = &command{
	summary: "print a shell completion script (bash, zsh or fish)",
	usage: `Usage: wend completion bash|zsh|fish

Prints a script that completes wend's commands, their subcommands and their flags, and file
names elsewhere. Load it in the shell's start-up file:

    bash:  source <(wend completion bash)                      (in ~/.bashrc)
    zsh:   source <(wend completion zsh)                       (in ~/.zshrc)
    fish:  wend completion fish > ~/.config/fish/completions/wend.fish

The script is generated from the commands' help, so it matches this wend.

Exit codes: 0 printed, 2 usage error.
`,
	run: runCompletion,
}

func runCompletion(e *env, args []string) int {
	if len(args) != 1 {
		return usageError(e, "completion", "want one shell: bash, zsh or fish")
	}
	words := e.completionWords()
	switch args[0] {
	case "bash":
		writeBash(e.stdout, words)
	case "zsh":
		// zsh runs the bash function through its bashcompinit layer: one script to keep right.
		fmt.Fprint(e.stdout, "# wend completion for zsh\nautoload -U +X compinit && compinit\nautoload -U +X bashcompinit && bashcompinit\n")
		writeBash(e.stdout, words)
	case "fish":
		writeFish(e.stdout, words)
	default:
		return usageError(e, "completion", "unknown shell %q: want bash, zsh or fish", args[0])
	}
	return exitOK
}

// completionWords is what each command completes to: its subcommands and its flags.
type cmdWords struct {
	name, summary string
	subs, flags   []string
}

var (
	flagToken = regexp.MustCompile(`--[a-z][a-z0-9-]*`)
	subToken  = regexp.MustCompile(`^[a-z][a-z-]*$`)
)

// completionWords reads each command's subcommands and flags from its help text: the usage
// lines name the subcommands, the usage lines and the flag list name the flags.
func (e *env) completionWords() []cmdWords {
	names := e.names()
	sort.Strings(names)
	var out []cmdWords
	for _, n := range names {
		c, _ := e.lookup(n)
		w := cmdWords{name: n, summary: c.summary}
		subs, flags := map[string]bool{}, map[string]bool{}
		head, _, _ := strings.Cut(c.usage, "\n\n")
		for _, line := range strings.Split(head, "\n") {
			f := strings.Fields(line)
			for i := 0; i+2 < len(f); i++ {
				if f[i] == "wend" && f[i+1] == n {
					for _, s := range strings.Split(strings.Trim(f[i+2], "[]()"), "|") {
						if subToken.MatchString(s) {
							subs[s] = true
						}
					}
				}
			}
		}
		for _, line := range strings.Split(c.usage, "\n") {
			if t := strings.TrimSpace(line); strings.HasPrefix(line, "Usage:") || strings.HasPrefix(line, "       wend") || strings.HasPrefix(t, "--") {
				for _, fl := range flagToken.FindAllString(line, -1) {
					flags[fl] = true
				}
			}
		}
		w.subs, w.flags = sortedKeys(subs), sortedKeys(flags)
		out = append(out, w)
	}
	return out
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func writeBash(w io.Writer, words []cmdWords) {
	var names []string
	for _, c := range words {
		names = append(names, c.name)
	}
	globals := "--" + strings.Join(globalFlags, " --")
	fmt.Fprintf(w, `# wend completion for bash: source <(wend completion bash)
_wend() {
	local cur="${COMP_WORDS[COMP_CWORD]}" prev="${COMP_WORDS[COMP_CWORD-1]}"
	local cmd="" i=1
	while [ "$i" -lt "$COMP_CWORD" ]; do
		case "${COMP_WORDS[i]}" in
		--db|--temporal|--namespace|--task-queue) i=$((i + 2)); continue ;;
		-*) ;;
		*) cmd="${COMP_WORDS[i]}"; break ;;
		esac
		i=$((i + 1))
	done
	case "$prev" in
	--db|--input-file|--output) COMPREPLY=($(compgen -f -- "$cur")); return ;;
	esac
	if [ -z "$cmd" ]; then
		COMPREPLY=($(compgen -W "%s %s --help --version" -- "$cur"))
		return
	fi
	local subs="" flags=""
	case "$cmd" in
	help) subs="%s" ;;
`, strings.Join(names, " "), globals, strings.Join(names, " "))
	for _, c := range words {
		fmt.Fprintf(w, "\t%s) subs=%q flags=%q ;;\n", c.name, strings.Join(c.subs, " "), strings.Join(c.flags, " "))
	}
	fmt.Fprint(w, `	esac
	if [[ "$cur" == -* ]]; then
		COMPREPLY=($(compgen -W "$flags --help" -- "$cur"))
	elif [ "$i" -eq "$((COMP_CWORD - 1))" ] && [ -n "$subs" ]; then
		COMPREPLY=($(compgen -W "$subs" -- "$cur"))
	else
		COMPREPLY=($(compgen -f -- "$cur"))
	fi
}
complete -o filenames -F _wend wend
`)
}

func writeFish(w io.Writer, words []cmdWords) {
	fmt.Fprint(w, "# wend completion for fish: wend completion fish > ~/.config/fish/completions/wend.fish\n")
	var names []string
	for _, c := range words {
		names = append(names, c.name)
	}
	fmt.Fprintf(w, "complete -c wend -n __fish_use_subcommand -l db -r -d 'database file'\n")
	for _, c := range words {
		fmt.Fprintf(w, "complete -c wend -f -n __fish_use_subcommand -a %s -d %s\n", c.name, fishQuote(c.summary))
	}
	fmt.Fprintf(w, "complete -c wend -f -n '__fish_seen_subcommand_from help' -a '%s'\n", strings.Join(names, " "))
	for _, c := range words {
		cond := fmt.Sprintf("'__fish_seen_subcommand_from %s'", c.name)
		if len(c.subs) > 0 {
			fmt.Fprintf(w, "complete -c wend -n %s -a '%s'\n", cond, strings.Join(c.subs, " "))
		}
		for _, f := range c.flags {
			fmt.Fprintf(w, "complete -c wend -n %s -l %s\n", cond, strings.TrimPrefix(f, "--"))
		}
	}
}

// fishQuote single-quotes s for fish, where only \ and ' are special inside single quotes.
func fishQuote(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'"
}
