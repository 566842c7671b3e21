package plugins

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/wendflow/wend/history"
	pluginv1 "github.com/wendflow/wend/sdk/go/proto/wend/plugin/v1"
	"github.com/wendflow/wend/sdk/go/wire"
)

// Host runs the declared plugins: one process per plugin, started on first use, shared by
// concurrent calls and restarted on the next call after it dies. It implements the engine's
// Activities interface. Close stops every process.
type Host struct {
	opts Options
	mask *masker // the secret values this host has put into calls

	mu       sync.Mutex
	slots    map[string]*slot
	closed   bool
	cacheDir string // created on first use when Options.CacheDir is empty
}

// slot holds the current process of one plugin; mu serialises starts so concurrent first
// calls share one process, and every check of the plugin's file between tries.
type slot struct {
	cfg Config

	mu      sync.Mutex
	proc    *process
	launch  launch     // what proc runs; kept to restart it after a crash
	retired []*process // replaced by a roll: each stops once its last try has ended
	// prepared is the attempt whose Prepare last checked proc's file, so that its call, which
	// follows at once, is not checked again (prepare.go).
	prepared string
	starts   int // processes started, for Stats
	rolls    int // of which to replace a live process with a new build
}

// launch is how a plugin starts: the program to exec (for a pinned binary, its verified
// private copy) and the build it runs.
type launch struct {
	program string
	copied  bool // program is our private copy: removed once no launch names it
	build   build
}

// New returns a Host for configs. It checks the declarations but starts nothing.
func New(configs []Config, opts Options) (*Host, error) {
	h := &Host{opts: opts.withDefaults(), slots: map[string]*slot{}, mask: &masker{}}
	log := h.opts.Log
	h.opts.Log = func(plugin, line string) { log(plugin, h.mask.text(line)) } // a plugin may print a secret it was given
	for _, c := range configs {
		if err := c.check(); err != nil {
			return nil, fmt.Errorf("new plugin host: %w", err)
		}
		if _, dup := h.slots[c.Name]; dup {
			return nil, fmt.Errorf("new plugin host: plugin %s: %w", c.Name, ErrDuplicate)
		}
		c.Command = append([]string(nil), c.Command...)
		c, err := c.resolveBuiltin(h.opts.Self, h.opts.Registry)
		if err != nil {
			return nil, fmt.Errorf("new plugin host: %w", err)
		}
		h.slots[c.Name] = &slot{cfg: c}
	}
	return h, nil
}

// Execute runs one try of call.Activity in plugin call.Plugin, passing heartbeats (which may be
// nil) as they arrive. It returns the activity's JSON output, or a *history.ActivityError.
// The try ends at call.Deadline or when ctx is done, whichever comes first.
func (h *Host) Execute(ctx context.Context, call history.ActivityCall, heartbeat func(history.Heartbeat)) (json.RawMessage, error) {
	return h.ExecuteBuild(ctx, call, heartbeat, nil)
}

// ExecuteBuild is Execute that first tells served (if not nil) the sha256 of the plugin build
// the try runs on, once the process is chosen: the engine records it on the try's outcome.
// A try that fails before a process serves it reports none.
func (h *Host) ExecuteBuild(ctx context.Context, call history.ActivityCall, heartbeat func(history.Heartbeat), served func(sha256 string)) (json.RawMessage, error) {
	vals, err := resolveSecrets(call)
	if err != nil {
		return nil, err
	}
	if call.Input, err = fillSecrets(call, vals); err != nil {
		return nil, err
	}
	h.mask.add(vals)
	if !h.mask.any() {
		return h.executeBuild(ctx, call, heartbeat, served)
	}
	// Every call's results are masked once the host knows a value: a plugin may keep a
	// secret one call gave it and print it in the next.
	if heartbeat != nil {
		hb := heartbeat
		heartbeat = func(b history.Heartbeat) { hb(history.Heartbeat{Progress: h.mask.json(b.Progress)}) }
	}
	out, err := h.executeBuild(ctx, call, heartbeat, served)
	if err != nil {
		return nil, h.mask.failure(err)
	}
	return h.mask.json(out), nil
}

func (h *Host) executeBuild(ctx context.Context, call history.ActivityCall, heartbeat func(history.Heartbeat), served func(sha256 string)) (json.RawMessage, error) {
	if len(call.Input) > MaxPayloadBytes {
		return nil, callError(TypePayloadTooLarge, true, "plugin %s: activity %s: input is %d bytes, over the %d-byte limit", call.Plugin, call.Activity, len(call.Input), MaxPayloadBytes)
	}
	if len(call.Input) > 0 && !json.Valid(call.Input) {
		return nil, callError(wire.TypeBadInput, true, "plugin %s: activity %s: input is not valid JSON", call.Plugin, call.Activity)
	}
	if err := over(ctx, call); err != nil { // do not start a plugin for a try that cannot run
		return nil, err
	}
	p, err := h.acquire(call.Plugin, call.ActivityAttemptID)
	if err != nil {
		return nil, err
	}
	defer p.release()
	if served != nil && p.build != "" {
		served(p.build)
	}
	return p.execute(ctx, call, heartbeat)
}

// over returns the error of a try whose caller already gave up or whose deadline has passed.
func over(ctx context.Context, call history.ActivityCall) error {
	deadlinePassed := !call.Deadline.IsZero() && !time.Now().Before(call.Deadline)
	switch {
	case deadlinePassed || errors.Is(ctx.Err(), context.DeadlineExceeded):
		return newError(history.CategoryTimeout, TypeTimeout, false, "plugin %s: activity %s: deadline passed before the call", call.Plugin, call.Activity)
	case ctx.Err() != nil:
		return newError(history.CategoryCancelled, TypeCancelled, false, "plugin %s: activity %s: cancelled before the call: %v", call.Plugin, call.Activity, context.Cause(ctx))
	}
	return nil
}

// Description is what a plugin says about itself.
type Description struct {
	Plugin     string
	Activities []ActivityInfo
}

// ActivityInfo describes one activity; nil schemas mean any JSON.
type ActivityInfo struct {
	Name         string          `json:"name"`
	Description  string          `json:"description,omitempty"`
	InputSchema  json.RawMessage `json:"input_schema,omitempty"`
	OutputSchema json.RawMessage `json:"output_schema,omitempty"`
}

// Find returns the activity called name.
func (d *Description) Find(name string) (ActivityInfo, bool) {
	for _, a := range d.Activities {
		if a.Name == name {
			return a, true
		}
	}
	return ActivityInfo{}, false
}

// Describe starts plugin if needed and returns its activities. Without a deadline on ctx it
// gives the plugin StartTimeout to answer.
func (h *Host) Describe(ctx context.Context, plugin string) (*Description, error) {
	p, err := h.acquire(plugin, "")
	if err != nil {
		return nil, err
	}
	defer p.release()
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, h.opts.StartTimeout)
		defer cancel()
	}
	resp, err := p.rpc.Describe(ctx, &pluginv1.DescribeRequest{})
	if err != nil {
		return nil, p.lost(history.ActivityCall{Plugin: plugin, Activity: "(describe)"}, err)
	}
	d := &Description{Plugin: plugin}
	for _, a := range resp.Activities {
		d.Activities = append(d.Activities, ActivityInfo{
			Name: a.Name, Description: a.Description,
			InputSchema: jsonOrNil(a.InputSchema), OutputSchema: jsonOrNil(a.OutputSchema),
		})
	}
	return d, nil
}

func jsonOrNil(b []byte) json.RawMessage {
	if len(b) == 0 || !json.Valid(b) {
		return nil
	}
	return json.RawMessage(b)
}

// Close stops every plugin process (each gets StopGrace to exit before its group is killed)
// and removes the private cache. Calls after Close fail with HostClosed.
func (h *Host) Close() error {
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return nil
	}
	h.closed = true
	slots := make([]*slot, 0, len(h.slots))
	for _, s := range h.slots {
		slots = append(slots, s)
	}
	cache := h.cacheDir
	h.mu.Unlock()

	var wg sync.WaitGroup
	for _, s := range slots {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.mu.Lock()
			defer s.mu.Unlock()
			if s.proc != nil {
				s.proc.stop()
				s.proc = nil
			}
			for _, p := range s.retired { // tries still on an old build end with the host
				p.stop()
			}
			s.retired = nil
		}()
	}
	wg.Wait()
	if cache != "" {
		if err := os.RemoveAll(cache); err != nil {
			return fmt.Errorf("close plugin host: %w", err)
		}
	}
	return nil
}

// acquire returns plugin's process for one use (a try, a Describe), starting it if there is
// none, it died, or its program changed on disk (a roll). The caller releases it when done.
// attempt names the try ("" for none): the call of a try whose Prepare just checked the
// running process's file takes that process as it is, still alive, without a second stat.
func (h *Host) acquire(plugin, attempt string) (*process, error) {
	s, err := h.slot(plugin)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if attempt != "" && attempt == s.prepared && s.proc != nil && s.proc.alive() {
		s.prepared = ""
		s.proc.acquire()
		return s.proc, nil
	}
	p, err := h.current(s, false)
	if err != nil {
		return nil, err
	}
	p.acquire()
	return p, nil
}

// process is acquire without counting a use, for tests and benchmarks.
func (h *Host) process(plugin string) (*process, error) {
	s, err := h.slot(plugin)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return h.current(s, false)
}

func (h *Host) slot(plugin string) (*slot, error) {
	h.mu.Lock()
	s, ok := h.slots[plugin]
	closed := h.closed
	h.mu.Unlock()
	if closed {
		return nil, hostError(TypeHostClosed, false, "plugin %s: the plugin host is closed", plugin)
	}
	if !ok {
		return nil, hostError(TypeUnknownPlugin, true, "unknown plugin %q (declared: %s)", plugin, h.names())
	}
	return s, nil
}

// current returns the process the next try of s runs on; the caller holds s.mu. That is the
// running process unless it died, its program's file changed (one stat per call; a hash only
// when the stat differs) or roll forces a new one. A new process starts from the program as
// it is on disk then, verified against Config.SHA256 when pinned; the process it replaces is
// retired: it finishes the tries it has and then stops. A new build that cannot start fails
// this try and leaves the running process in place (the next try tries the roll again).
func (h *Host) current(s *slot, roll bool) (*process, error) {
	s.pruneRetired()
	if s.proc != nil && s.proc.alive() && !roll && !s.launch.build.changed() {
		return s.proc, nil
	}
	if s.proc != nil && !s.proc.alive() { // dead: collect go-plugin's goroutines before starting afresh
		s.proc.stop()
		s.proc = nil
	}
	h.mu.Lock()
	closed := h.closed
	h.mu.Unlock()
	if closed { // Close ran while we waited for the slot
		return nil, hostError(TypeHostClosed, false, "plugin %s: the plugin host is closed", s.cfg.Name)
	}
	l := s.launch
	if s.proc != nil || roll || l.program == "" || l.build.changed() {
		var err error
		if l, err = h.locate(s.cfg); err != nil {
			return nil, err
		}
	}
	var hashed chan struct{}
	if l.build.sha256 == "" {
		// Hash while the process starts (a handshake takes tens of milliseconds, hashing a
		// 20 MB binary about ten). A file that cannot be read still runs; its tries then name
		// no build.
		hashed = make(chan struct{})
		go func() {
			defer close(hashed)
			if sum, st, err := hashFile(l.build.path); err == nil {
				l.build.sha256, l.build.stamp = sum, st
			}
		}()
	}
	p, err := startProcess(s.cfg, l.program, h.opts)
	if hashed != nil {
		<-hashed
	}
	if err != nil {
		if l.copied && l.program != s.launch.program {
			os.Remove(l.program)
		}
		return nil, err
	}
	p.build = l.build.sha256
	if s.launch.copied && s.launch.program != l.program {
		// Unlinking a copy an old process still runs is safe: the kernel keeps its inode.
		os.Remove(s.launch.program)
	}
	if s.proc != nil {
		s.retired = append(s.retired, s.proc)
		s.proc.retire()
		s.rolls++
	}
	s.proc, s.launch = p, l
	s.starts++
	return p, nil
}

// pruneRetired forgets the retired processes that have stopped.
func (s *slot) pruneRetired() {
	live := s.retired[:0]
	for _, p := range s.retired {
		if !p.isStopped() {
			live = append(live, p)
		}
	}
	clear(s.retired[len(live):])
	s.retired = live
}

func (h *Host) names() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return strings.Join(slices.Sorted(maps.Keys(h.slots)), ", ")
}

// locate resolves cfg's program, verifies it when pinned, and names the build it runs.
func (h *Host) locate(cfg Config) (launch, error) {
	prog := cfg.Command[0]
	var path string
	if strings.ContainsRune(prog, filepath.Separator) {
		path = resolve(cfg.Dir, prog)
		if abs, err := filepath.Abs(path); err == nil {
			path = abs
		}
		if err := checkExecutable(path); err != nil {
			return launch{}, startError(TypePluginNotFound, true, "start plugin %s: %v", cfg.Name, err)
		}
	} else {
		found, err := exec.LookPath(prog)
		if err != nil {
			return launch{}, startError(TypePluginNotFound, true, "start plugin %s: %q not found in PATH", cfg.Name, prog)
		}
		path = found
	}
	if cfg.SHA256 == "" { // hashed by current while the process starts
		return launch{program: path, build: build{path: watched(cfg, path)}}, nil
	}
	pin := strings.ToLower(cfg.SHA256)
	if strings.ContainsRune(prog, filepath.Separator) {
		dir, err := h.cache()
		if err != nil {
			return launch{}, startError(TypeChecksumMismatch, false, "start plugin %s: %v", cfg.Name, err)
		}
		copyPath, st, err := verifyCopy(path, dir, cfg.Name, cfg.SHA256)
		if err != nil {
			return launch{}, checksumFailed(cfg.Name, err)
		}
		return launch{program: copyPath, copied: true, build: build{path: path, stamp: st, sha256: pin}}, nil
	}
	i := pinnedScript(cfg.Dir, cfg.Command[1:])
	if i < 0 {
		return launch{}, startError(TypeChecksumMismatch, true, "start plugin %s: sha256 is set but no argument of %q names a file to check", cfg.Name, cfg.Command)
	}
	script := watched(cfg, path)
	st, err := verifyInPlace(script, cfg.SHA256)
	if err != nil {
		return launch{}, checksumFailed(cfg.Name, err)
	}
	return launch{program: path, build: build{path: script, stamp: st, sha256: pin}}, nil
}

func checksumFailed(name string, err error) error {
	var ce *checksumError
	if errors.As(err, &ce) {
		return startError(TypeChecksumMismatch, true, "start plugin %s: %v", name, err)
	}
	return startError(TypeChecksumMismatch, false, "start plugin %s: verify checksum: %v", name, err)
}

func checkExecutable(path string) error {
	st, err := os.Stat(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return fmt.Errorf("%s does not exist", path)
	case err != nil:
		return err
	case !st.Mode().IsRegular():
		return fmt.Errorf("%s is not a regular file", path)
	case st.Mode().Perm()&0o111 == 0:
		return fmt.Errorf("%s is not executable", path)
	}
	return nil
}

func (h *Host) cache() (string, error) {
	if h.opts.CacheDir != "" {
		return h.opts.CacheDir, nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.cacheDir == "" {
		dir, err := os.MkdirTemp("", "wend-plugins-")
		if err != nil {
			return "", err
		}
		h.cacheDir = dir
	}
	return h.cacheDir, nil
}
