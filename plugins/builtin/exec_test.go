package builtin

import (
	"context"
	"strings"
	"testing"
)

func TestRun(t *testing.T) {
	t.Setenv("WEND_TEST_PASSED", "passed")
	t.Setenv("WEND_TEST_HIDDEN", "hidden")
	dir := t.TempDir()
	tests := []struct {
		name      string
		in        map[string]any
		want      map[string]any // fields of the output
		errType   string
		permanent bool
		errHas    string
	}{
		{name: "argv without a shell", in: map[string]any{"argv": []string{"echo", "a b", "$HOME"}},
			want: map[string]any{"exit_code": 0.0, "stdout": "a b $HOME\n", "stderr": ""}},
		{name: "shell with positional arguments", in: map[string]any{"argv": []string{`echo "$1-$2" >&2`, "x", "y"}, "shell": true},
			want: map[string]any{"stderr": "x-y\n"}},
		{name: "stdin", in: map[string]any{"argv": []string{"cat"}, "stdin": "fed\n"},
			want: map[string]any{"stdout": "fed\n"}},
		{name: "env is an allow-list", in: map[string]any{"argv": []string{"env"}, "env": []string{"WEND_TEST_PASSED", "SET=1"}},
			want: map[string]any{"stdout~": "WEND_TEST_PASSED=passed\n", "stdout!~": "WEND_TEST_HIDDEN"}},
		{name: "set variable", in: map[string]any{"argv": []string{"env"}, "env": []string{"SET=1"}},
			want: map[string]any{"stdout~": "SET=1\n"}},
		{name: "dir", in: map[string]any{"argv": []string{"pwd"}, "dir": dir},
			want: map[string]any{"stdout": dir + "\n"}},
		{name: "output cut at the limit", in: map[string]any{"argv": []string{"echo", "0123456789"}, "max_output_bytes": 4},
			want: map[string]any{"stdout": "0123", "stdout_truncated": true}},
		{name: "non-zero exit names the code", in: map[string]any{"argv": []string{"echo out; echo why >&2; exit 3"}, "shell": true},
			errType: "ExitCode3", errHas: "exited with code 3: why"},
		{name: "missing program", in: map[string]any{"argv": []string{"wend-no-such-program"}},
			errType: "CommandNotFound", permanent: true},
		{name: "empty argv", in: map[string]any{"argv": []string{}}, errType: "BadInput", permanent: true, errHas: "argv"},
		{name: "bad timeout", in: map[string]any{"argv": []string{"true"}, "timeout": "soon"}, errType: "BadInput", permanent: true, errHas: "timeout"},
		{name: "bad env entry", in: map[string]any{"argv": []string{"true"}, "env": []string{"1X=2"}}, errType: "BadInput", permanent: true, errHas: "env"},
		{name: "limit too big", in: map[string]any{"argv": []string{"true"}, "max_output_bytes": 1 << 30}, errType: "BadInput", permanent: true},
		{name: "unknown field", in: map[string]any{"args": []string{"true"}}, errType: "BadInput", permanent: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := call(t, context.Background(), "exec", "run", tt.in)
			if tt.errType != "" {
				if err == nil {
					t.Fatalf("want a %s failure, got output %v", tt.errType, out)
				}
				if err.Type != tt.errType || err.NonRetryable != tt.permanent || !strings.Contains(err.Message, tt.errHas) {
					t.Fatalf("got %s (non-retryable %v) %q; want %s (non-retryable %v) containing %q",
						err.Type, err.NonRetryable, err.Message, tt.errType, tt.permanent, tt.errHas)
				}
				return
			}
			if err != nil {
				t.Fatalf("unexpected failure %v", err)
			}
			for k, v := range tt.want {
				switch {
				case strings.HasSuffix(k, "!~"):
					if s, _ := out[strings.TrimSuffix(k, "!~")].(string); strings.Contains(s, v.(string)) {
						t.Errorf("%s holds %q: %q", k, v, s)
					}
				case strings.HasSuffix(k, "~"):
					if s, _ := out[strings.TrimSuffix(k, "~")].(string); !strings.Contains(s, v.(string)) {
						t.Errorf("%s lacks %q: %q", k, v, s)
					}
				default:
					if out[k] != v {
						t.Errorf("%s = %#v, want %#v", k, out[k], v)
					}
				}
			}
		})
	}
}
