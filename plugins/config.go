package plugins

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/wendflow/wend/plugins/cmdgroup"
)

// Config declares one plugin. The CLI maps a workflow's `plugins:` entries to it.
type Config struct {
	Name    string   // plugin name as declared in the workflow ("accounts")
	Command []string // program and arguments, e.g. ["./accounts"] or ["python3", "plugin.py"]
	// Dir is the base for a relative program or script path and the plugin's working
	// directory; usually the workflow file's folder. Empty: the current directory.
	Dir string
	// SHA256 (hex) pins the program: Command[0] when it is a path (it is copied to a private
	// directory, verified there and run from there), else the first argument naming an existing
	// file, e.g. the script of ["python3", "plugin.py"] (verified in place: scripts import their
	// neighbours, so they cannot be moved). Empty: not pinned.
	SHA256 string
	// Env names extra variables for the plugin: "NAME" passes the host's value through,
	// "NAME=VALUE" sets one. PATH, HOME, LANG and TZ always pass; nothing else does.
	Env []string
	// StartTimeout bounds this plugin's start instead of Options.StartTimeout; 0: that.
	StartTimeout time.Duration
}

// Options tune a Host. The zero value is usable.
type Options struct {
	// StartTimeout bounds start to handshake and first health check, unless the plugin's
	// Config sets its own. Default 30s: eight Node plugins starting at once on a 2-core
	// machine at load 12 took 7.5 s (docs/performance.md).
	StartTimeout time.Duration
	// StartBackoff are the waits before each new start of a plugin whose start failed for a
	// reason that may pass (no handshake in time on a busy machine): a try's Prepare starts it
	// up to len(StartBackoff)+1 times before the failure becomes the try's outcome, so a slow
	// start does not use up a step's tries. A start that cannot succeed (a missing program, a
	// crash at start, a wrong checksum) fails at once. Default 1s, 5s; empty non-nil: none.
	StartBackoff []time.Duration
	// StopGrace is how long a plugin gets to end a cancelled try, or to exit when stopped,
	// before its process group is killed. Default 2s.
	StopGrace time.Duration
	// Log receives each line the plugin writes to stderr, tagged with the plugin's name, and
	// the host's warnings about the plugin (a registry it cannot write).
	// Default: written to os.Stderr as "plugin NAME: LINE".
	Log func(plugin, line string)
	// CacheDir holds verified copies of pinned binaries; it must be private to this user.
	// Default: a fresh 0700 temporary directory removed by Close.
	CacheDir string
	// Self is the program that serves builtin plugins (a Config whose command is
	// BuiltinCommandPrefix + NAME) when started with BuiltinEnv=NAME. Empty: this executable.
	Self string
	// Registry is a file where the host records the plugin processes it runs, so that Reap,
	// run by the next owner after this host was killed, can end those still running. Only
	// one process may use a registry at a time. Empty: none.
	Registry string
}

const (
	defaultStartTimeout = 30 * time.Second
	defaultStopGrace    = 2 * time.Second
)

func (o Options) withDefaults() Options {
	if o.StartTimeout <= 0 {
		o.StartTimeout = defaultStartTimeout
	}
	if o.StartBackoff == nil {
		o.StartBackoff = []time.Duration{time.Second, 5 * time.Second}
	}
	if o.StopGrace <= 0 {
		o.StopGrace = defaultStopGrace
	}
	if o.Self == "" {
		o.Self, _ = os.Executable() // empty on failure: a builtin then fails to start, saying so
	}
	if o.Log == nil {
		o.Log = writerLog(os.Stderr)
	}
	return o
}

// writerLog returns a Log function that writes "plugin NAME: LINE" lines to w.
func writerLog(w io.Writer) func(plugin, line string) {
	return func(plugin, line string) { fmt.Fprintf(w, "plugin %s: %s\n", plugin, line) }
}

var (
	// ErrNoName is returned by New for a Config without a name.
	ErrNoName = errors.New("plugin has no name")
	// ErrNoCommand is returned by New for a Config without a command.
	ErrNoCommand = errors.New("plugin has no command")
	// ErrDuplicate is returned by New when two Configs share a name.
	ErrDuplicate = errors.New("plugin declared twice")
	// ErrBadChecksum is returned by New when SHA256 is not 64 hex digits.
	ErrBadChecksum = errors.New("sha256 must be 64 hex digits")
)

func (c Config) check() error {
	switch {
	case c.Name == "":
		return ErrNoName
	case len(c.Command) == 0 || c.Command[0] == "":
		return fmt.Errorf("plugin %s: %w", c.Name, ErrNoCommand)
	case c.SHA256 != "" && !isHex64(c.SHA256):
		return fmt.Errorf("plugin %s: %w, got %q", c.Name, ErrBadChecksum, c.SHA256)
	}
	return nil
}

func isHex64(s string) bool {
	if len(s) != 64 {
		return false
	}
	return strings.Trim(strings.ToLower(s), "0123456789abcdef") == ""
}

// environ is the plugin's whole environment before go-plugin adds its own variables.
func (c Config) environ() []string {
	env := []string{}
	for _, k := range []string{"PATH", "HOME", "LANG", "TZ"} {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	for _, e := range c.Env {
		if strings.Contains(e, "=") {
			env = append(env, e)
		} else if v, ok := os.LookupEnv(e); ok {
			env = append(env, e+"="+v)
		}
	}
	return env
}

// UnsetEnv is the names the plugin's env: passes through (NAME, without a value) that are not
// set in wend's environment: the plugin gets none of them, which a plugin falling back to a
// default does silently.
func (c Config) UnsetEnv() []string {
	var unset []string
	for _, e := range c.Env {
		if strings.Contains(e, "=") {
			continue
		}
		if _, ok := os.LookupEnv(e); !ok {
			unset = append(unset, e)
		}
	}
	return unset
}

// BuiltinCommandPrefix starts the command of a builtin plugin (spec.BuiltinCommandPrefix):
// ["wend:builtin:http"] runs Options.Self with BuiltinEnv=http.
const BuiltinCommandPrefix = "wend:builtin:"

// BuiltinEnv tells the program started for a builtin plugin which one to serve.
const BuiltinEnv = "WEND_BUILTIN_PLUGIN"

// resolveBuiltin turns a builtin plugin's config into the command that serves it; with a
// registry, the builtin records the commands it runs in the folder commandsDir names.
func (c Config) resolveBuiltin(self, registry string) (Config, error) {
	if len(c.Command) != 1 || !strings.HasPrefix(c.Command[0], BuiltinCommandPrefix) {
		return c, nil
	}
	name := strings.TrimPrefix(c.Command[0], BuiltinCommandPrefix)
	if self == "" {
		return c, fmt.Errorf("plugin %s: builtin %s: cannot find wend's own executable", c.Name, name)
	}
	c.Command = []string{self}
	c.Env = append(append([]string(nil), c.Env...), BuiltinEnv+"="+name)
	if registry != "" {
		c.Env = append(c.Env, cmdgroup.DirEnv+"="+commandsDir(registry))
	}
	return c, nil
}
