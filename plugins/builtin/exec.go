package builtin

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/wendflow/wend/plugins/cmdgroup"
	sdk "github.com/wendflow/wend/sdk/go"
)

// Output limits of sh.run: each stream keeps its first bytes up to the limit.
const (
	defaultOutputBytes = 256 << 10
	maxOutputBytes     = 768 << 10 // stdout and stderr together stay under sdk.MaxPayloadBytes
)

// killGrace is how long a finished command's stdout and stderr may stay open (a background
// child holding them) before the try stops waiting for them.
const killGrace = 2 * time.Second

type execInput struct {
	Argv           []string `json:"argv"`
	Shell          bool     `json:"shell"`
	Env            []string `json:"env"`
	Dir            string   `json:"dir"`
	Stdin          string   `json:"stdin"`
	Timeout        string   `json:"timeout"`
	MaxOutputBytes int      `json:"max_output_bytes"`
}

type execOutput struct {
	ExitCode        int    `json:"exit_code"`
	Stdout          string `json:"stdout"`
	Stderr          string `json:"stderr"`
	StdoutTruncated bool   `json:"stdout_truncated,omitempty"`
	StderrTruncated bool   `json:"stderr_truncated,omitempty"`
}

const execInputSchema = `{
  "type": "object",
  "additionalProperties": false,
  "required": ["argv"],
  "properties": {
    "argv": {"description": "The program and its arguments; with shell: true, a shell script and its positional arguments ($1...).", "type": "array", "minItems": 1, "items": {"type": "string"}},
    "shell": {"description": "Run argv[0] as a script of sh -c (cmd /C on Windows). Default false: no shell.", "type": "boolean"},
    "env": {"description": "Variables the command gets besides PATH, HOME, LANG and TZ: NAME passes the plugin's value, NAME=value sets one.", "type": "array", "items": {"type": "string", "pattern": "^[A-Za-z_][A-Za-z0-9_]*(=.*)?$"}},
    "dir": {"description": "Working directory; relative to the workflow file's folder.", "type": "string"},
    "stdin": {"description": "Text written to the command's standard input.", "type": "string"},
    "timeout": {"description": "Kill the command (and its children) after this long, e.g. 30s.", "type": "string"},
    "max_output_bytes": {"description": "Bytes kept of stdout and of stderr each (default 262144, at most 786432).", "type": "integer", "minimum": 1, "maximum": 786432}
  }
}`

const execOutputSchema = `{
  "type": "object",
  "required": ["exit_code", "stdout", "stderr"],
  "properties": {
    "exit_code": {"type": "integer"},
    "stdout": {"type": "string"},
    "stderr": {"type": "string"},
    "stdout_truncated": {"type": "boolean"},
    "stderr_truncated": {"type": "boolean"}
  }
}`

func execActivities() sdk.Activities {
	return sdk.Activities{
		"run": sdk.Func(run, execInputSchema, execOutputSchema).Describe(
			"Run a command without a shell (unless shell: true); a non-zero exit fails the try with type ExitCode<N>."),
	}
}

func badInput(format string, args ...any) *sdk.Error {
	return sdk.NonRetryable(sdk.TypeBadInput, fmt.Sprintf(format, args...))
}

func (in execInput) check() (limit int, timeout time.Duration, err error) {
	if len(in.Argv) == 0 || in.Argv[0] == "" {
		return 0, 0, badInput("argv: want the program and its arguments, e.g. [\"echo\", \"hi\"]")
	}
	limit = defaultOutputBytes
	switch {
	case in.MaxOutputBytes < 0 || in.MaxOutputBytes > maxOutputBytes:
		return 0, 0, badInput("max_output_bytes: must be 1 to %d, got %d", maxOutputBytes, in.MaxOutputBytes)
	case in.MaxOutputBytes > 0:
		limit = in.MaxOutputBytes
	}
	if in.Timeout != "" {
		if timeout, err = time.ParseDuration(in.Timeout); err != nil || timeout <= 0 {
			return 0, 0, badInput("timeout: want a positive duration like 30s, got %q", in.Timeout)
		}
	}
	for _, e := range in.Env {
		name, _, _ := strings.Cut(e, "=")
		if !validEnvName(name) {
			return 0, 0, badInput("env: %q is not NAME or NAME=value", e)
		}
	}
	return limit, timeout, nil
}

func validEnvName(s string) bool {
	for i, r := range s {
		if !(r == '_' || r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || i > 0 && r >= '0' && r <= '9') {
			return false
		}
	}
	return s != ""
}

func run(ctx *sdk.Context, in execInput) (*execOutput, error) {
	limit, timeout, err := in.check()
	if err != nil {
		return nil, err
	}
	var runCtx context.Context = ctx.Context
	if timeout > 0 {
		var cancel context.CancelFunc
		runCtx, cancel = context.WithTimeout(ctx.Context, timeout)
		defer cancel()
	}
	// A retried try never runs beside its earlier try's command: kill what that left first.
	records := cmdgroup.At(os.Getenv(cmdgroup.DirEnv))
	if _, err := records.ReapKey(ctx.ActivityExecutionID); err != nil {
		return nil, sdk.NewError("KillFailed", fmt.Sprintf("%s: an earlier try's command is still running: %v", in.Argv[0], err))
	}
	cmd := command(runCtx, in)
	stdout, stderr := &capped{limit: limit}, &capped{limit: limit}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	if in.Stdin != "" {
		cmd.Stdin = strings.NewReader(in.Stdin)
	}
	g, err := startGroup(cmd, records, ctx.ActivityExecutionID)
	if err == nil {
		err = cmd.Wait()
		// No command outlives its try: what is left of its group (a background child) is
		// killed now, and its record removed once it is gone.
		if endErr := g.end(); endErr != nil {
			return nil, sdk.NewError("KillFailed", fmt.Sprintf("%s: %v", in.Argv[0], endErr))
		}
		if errors.Is(err, exec.ErrWaitDelay) {
			err = nil // a background child kept the output open past the grace: it is killed above
		}
	}
	if cmd.ProcessState == nil { // it never started
		if errors.Is(err, exec.ErrNotFound) || errors.Is(err, os.ErrNotExist) {
			return nil, sdk.NonRetryable("CommandNotFound", fmt.Sprintf("%s: %v", in.Argv[0], err))
		}
		return nil, sdk.NewError("StartFailed", fmt.Sprintf("%s: %v", in.Argv[0], err))
	}
	out := &execOutput{ExitCode: cmd.ProcessState.ExitCode(), Stdout: stdout.String(), Stderr: stderr.String(),
		StdoutTruncated: stdout.dropped > 0, StderrTruncated: stderr.dropped > 0}
	switch {
	case ctx.Err() != nil: // the host's cancel or the try's deadline: the SDK reports it
		return nil, ctx.Err()
	case runCtx.Err() != nil:
		return nil, sdk.NewError(sdk.TypeTimeout, fmt.Sprintf("%s: killed after the timeout of %s", in.Argv[0], timeout)).WithDetails(out)
	case err == nil:
		return out, nil
	}
	var exitErr *exec.ExitError
	if !errors.As(err, &exitErr) {
		return nil, sdk.NewError("StartFailed", fmt.Sprintf("%s: %v", in.Argv[0], err))
	}
	if out.ExitCode < 0 {
		return nil, sdk.NewError("Signaled", fmt.Sprintf("%s: %v", in.Argv[0], exitErr)).WithDetails(out)
	}
	return nil, sdk.NewError(fmt.Sprintf("ExitCode%d", out.ExitCode),
		fmt.Sprintf("%s exited with code %d%s", in.Argv[0], out.ExitCode, tail(out.Stderr))).WithDetails(out)
}

// command builds the command of in, killed with its children when ctx ends (startGroup).
func command(ctx context.Context, in execInput) *exec.Cmd {
	argv := in.Argv
	if in.Shell {
		argv = shellArgv(argv)
	}
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = in.Dir
	cmd.Env = commandEnv(in.Env)
	cmd.WaitDelay = killGrace
	if in.Shell {
		shellLine(cmd, in.Argv)
	}
	return cmd
}

// commandEnv is the command's whole environment: the plugin's PATH, HOME, LANG and TZ, then
// what the input names.
func commandEnv(names []string) []string {
	env := []string{}
	for _, k := range append([]string{"PATH", "HOME", "LANG", "TZ"}, platformEnv...) {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	for _, e := range names {
		if strings.Contains(e, "=") {
			env = append(env, e)
		} else if v, ok := os.LookupEnv(e); ok {
			env = append(env, e+"="+v)
		}
	}
	return env
}

// tail is the last line of a command's stderr for an error message, or "".
func tail(stderr string) string {
	s := strings.TrimSpace(stderr)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	if len(s) > 200 {
		s = s[:200] + "..."
	}
	if s == "" {
		return ""
	}
	return ": " + s
}

// capped keeps the first limit bytes written to it and counts the rest.
type capped struct {
	limit   int
	buf     bytes.Buffer
	dropped int64
}

func (c *capped) Write(p []byte) (int, error) {
	room := c.limit - c.buf.Len()
	if room >= len(p) {
		c.buf.Write(p)
		return len(p), nil
	}
	if room > 0 {
		c.buf.Write(p[:room])
	}
	c.dropped += int64(len(p) - max(room, 0))
	return len(p), nil
}

func (c *capped) String() string { return strings.ToValidUTF8(c.buf.String(), "\uFFFD") }
