package plugins

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/wendflow/wend/history"
	pluginv1 "github.com/wendflow/wend/sdk/go/proto/wend/plugin/v1"
	"github.com/wendflow/wend/sdk/go/wire"
)

// Check statuses.
const (
	CheckOK   = "ok"
	CheckFail = "FAIL"
	CheckSkip = "skip"
)

// Check is one line of a conformance report.
type Check struct {
	Name   string
	Status string // CheckOK, CheckFail or CheckSkip
	Detail string // what was seen, why it failed or why it was skipped
}

// Sample is an activity to call with an input.
type Sample struct {
	Activity string
	Input    json.RawMessage
}

// ConformOptions say what Conform may call and how it checks schemas.
type ConformOptions struct {
	// Call is an activity that is safe to run (no effects that matter) and ends by itself with
	// a result. Empty: Conform runs no activity of the plugin, only requests for an activity it
	// does not offer.
	Call Sample
	// Slow is an activity that is safe to run, runs for seconds and stops when cancelled, such
	// as the examples' sleep {"ms":10000}: the cancel and heartbeat checks use it. Empty: they
	// are skipped.
	Slow Sample
	// Schema compiles one of Describe's JSON Schemas and returns a validator for values (the
	// caller's compiler: this package holds none). Nil: schemas are only checked to be JSON.
	Schema func(schema json.RawMessage) (validate func(json.RawMessage) error, err error)
	// Report receives each check as it completes.
	Report func(Check)
}

// conformNoSuchActivity is the activity Conform asks for to see the plugin refuse it.
const conformNoSuchActivity = "wend-plugin-test-no-such-activity"

// conformCallTimeout bounds a try Conform expects to end by itself.
const conformCallTimeout = 30 * time.Second

// heartbeatWait is how long Conform waits for the slow activity's first heartbeat before it
// cancels the try anyway.
const heartbeatWait = 2 * time.Second

// Conform starts the plugin cfg declares, checks it against the protocol the host speaks and
// stops it: the handshake, the health check, mutual TLS, Describe and its schemas, Execute
// (an unknown activity, opts.Call, a cancel, heartbeats, no event after the final one) and
// Lane when the plugin serves it. It reports a Check per line and returns how many failed.
// `wend plugin test`.
func Conform(ctx context.Context, cfg Config, opts Options, co ConformOptions) (failed int) {
	report := func(name, status, format string, args ...any) {
		if status == CheckFail {
			failed++
		}
		co.Report(Check{Name: name, Status: status, Detail: fmt.Sprintf(format, args...)})
	}
	h, err := oneShot(&cfg, opts)
	if err != nil {
		report("handshake", CheckFail, "%v", err)
		return failed
	}
	defer h.Close()
	c := &conformer{opts: h.opts, co: co, report: report, ctx: ctx}
	c.run(h, cfg.Name)
	return failed
}

// historyCall is a try as the host would send it, with fresh ids.
func historyCall(activity string, input []byte, deadline time.Time) history.ActivityCall {
	return history.ActivityCall{Activity: activity, Input: input, WorkflowID: "wend-plugin-test", RunID: "test-" + randomID(),
		StepPath: "steps[0]", ActivityExecutionID: "test-" + randomID(), ActivityAttemptID: "test-" + randomID(), Attempt: 1, Deadline: deadline}
}

type conformer struct {
	opts   Options
	co     ConformOptions
	report func(name, status, format string, args ...any)
	ctx    context.Context
	p      *process
	acts   map[string]*pluginv1.ActivityInfo
}

func (c *conformer) run(h *Host, name string) {
	s, err := h.slot(name)
	if err != nil {
		c.report("handshake", CheckFail, "%v", err)
		return
	}
	l, err := h.locate(s.cfg)
	if err != nil {
		c.report("handshake", CheckFail, "%v", err)
		return
	}
	p, err := handshake(s.cfg, l.program, c.opts)
	if err != nil {
		c.report("handshake", CheckFail, "%v", err)
		return
	}
	c.p = p
	defer p.stop()
	c.report("handshake", CheckOK, "go-plugin protocol 1, app protocol 1, gRPC, mutual TLS; pid %d", p.runner.pid)
	if err := p.checkHealth(c.opts.StartTimeout); err != nil {
		c.report("health", CheckFail, "grpc.health.v1.Health/Check for service %q: %v%s", "plugin", err, p.stderr.last())
		return
	}
	c.report("health", CheckOK, "service %q is SERVING", "plugin")
	c.foreignClient()
	if !c.describe() {
		return
	}
	c.execute()
	c.lane()
	c.shutdown()
}

// foreignClient checks that the plugin refuses a client without the host's certificate.
func (c *conformer) foreignClient() {
	addr := c.p.client.ReattachConfig().Addr
	for _, tc := range []struct {
		what  string
		creds credentials.TransportCredentials
	}{
		{"without TLS", insecure.NewCredentials()},
		{"with TLS but no client certificate", credentials.NewTLS(&tls.Config{InsecureSkipVerify: true})},
	} {
		conn, err := grpc.NewClient("passthrough:///"+addr.String(), grpc.WithTransportCredentials(tc.creds),
			grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) {
				return (&net.Dialer{}).DialContext(ctx, addr.Network(), addr.String())
			}))
		if err != nil {
			c.report("mtls", CheckFail, "dial %s: %v", addr, err)
			return
		}
		ctx, cancel := context.WithTimeout(c.ctx, c.opts.StartTimeout)
		_, err = pluginv1.NewActivitiesClient(conn).Describe(ctx, &pluginv1.DescribeRequest{})
		cancel()
		conn.Close()
		if err == nil {
			c.report("mtls", CheckFail, "a client %s called Describe: require a client certificate signed by PLUGIN_CLIENT_CERT", tc.what)
			return
		}
	}
	c.report("mtls", CheckOK, "refuses clients without the host's certificate")
}

// describe checks Describe's answer and the schemas in it; false: nothing else can be checked.
func (c *conformer) describe() bool {
	ctx, cancel := context.WithTimeout(c.ctx, c.opts.StartTimeout)
	defer cancel()
	resp, err := c.p.rpc.Describe(ctx, &pluginv1.DescribeRequest{})
	if err != nil {
		c.report("describe", CheckFail, "%v", err)
		return false
	}
	c.acts = map[string]*pluginv1.ActivityInfo{}
	var names, problems []string
	for i, a := range resp.Activities {
		switch {
		case a.Name == "":
			problems = append(problems, fmt.Sprintf("activity %d has no name", i))
		case c.acts[a.Name] != nil:
			problems = append(problems, fmt.Sprintf("activity %q is listed twice", a.Name))
		default:
			names = append(names, a.Name)
			c.acts[a.Name] = a
		}
	}
	switch {
	case len(problems) > 0:
		c.report("describe", CheckFail, "%s", strings.Join(problems, "; "))
	case len(names) == 0:
		c.report("describe", CheckFail, "no activities: a workflow could call nothing")
	default:
		slices.Sort(names)
		what := fmt.Sprintf("%d activities", len(names))
		if len(names) == 1 {
			what = "1 activity"
		}
		c.report("describe", CheckOK, "%s: %s", what, strings.Join(names, ", "))
	}
	bad, declared := 0, 0
	for _, name := range names {
		a := c.acts[name]
		for _, sc := range []struct {
			which string
			raw   []byte
		}{{"input", a.InputSchema}, {"output", a.OutputSchema}} {
			if len(sc.raw) == 0 {
				continue
			}
			declared++
			if err := c.compile(sc.raw); err != nil {
				bad++
				c.report("schema "+name+" "+sc.which, CheckFail, "%v", err)
			}
		}
	}
	switch {
	case bad > 0:
	case declared == 0:
		c.report("schemas", CheckSkip, "no activity declares a schema (any JSON is accepted)")
	case c.co.Schema == nil:
		c.report("schemas", CheckOK, "%d schemas are JSON (not compiled)", declared)
	default:
		c.report("schemas", CheckOK, "%d schemas compile", declared)
	}
	return len(names) > 0
}

func (c *conformer) compile(raw []byte) error {
	if !json.Valid(raw) {
		return errors.New("not valid JSON")
	}
	if c.co.Schema == nil {
		return nil
	}
	_, err := c.co.Schema(raw)
	return err
}

// sample checks that s names a described activity whose input schema takes s.Input.
func (c *conformer) sample(check string, s Sample) bool {
	a := c.acts[s.Activity]
	if a == nil {
		c.report(check, CheckFail, "the plugin does not describe an activity %q", s.Activity)
		return false
	}
	if len(a.InputSchema) == 0 || c.co.Schema == nil {
		return true
	}
	validate, err := c.co.Schema(a.InputSchema)
	if err != nil {
		c.report(check, CheckSkip, "%s's input schema does not compile (reported above)", s.Activity)
		return false
	}
	if err := validate(s.Input); err != nil {
		c.report(check, CheckFail, "the input given for %s does not match its input schema: %v", s.Activity, err)
		return false
	}
	return true
}

func (c *conformer) execute() {
	const stream = "Execute"
	if ev, ok := c.once(stream, "errors", c.request(conformNoSuchActivity, []byte(`{}`))); ok {
		c.unknownActivity("errors", ev)
	}
	if c.co.Call.Activity == "" {
		c.report("execute", CheckSkip, "no --activity given: wend plugin test runs only an activity you name as safe")
	} else if c.sample("execute", c.co.Call) {
		if ev, ok := c.once(stream, "execute", c.request(c.co.Call.Activity, c.co.Call.Input)); ok {
			c.result("execute", c.co.Call.Activity, ev)
		}
		c.cancelRace()
	}
	if c.co.Slow.Activity == "" {
		c.report("cancel", CheckSkip, "no --slow activity given: cancel and heartbeats need one that runs for seconds")
		return
	}
	if !c.sample("cancel", c.co.Slow) {
		return
	}
	s, end, err := c.open(c.p.rpc.Execute)
	if err != nil {
		c.report("cancel", CheckFail, "open an Execute stream: %v", err)
		return
	}
	defer end()
	if done, ok := c.slowCancelled(stream, s, wire.ReasonCancelled); ok && c.ended(stream, "cancel", s) {
		c.report("cancel", CheckOK, "%s", done)
	}
}

// once runs one try on a new Execute stream and checks that the stream ends after its final
// event; ok is false when the try failed (and was reported).
func (c *conformer) once(stream, check string, req *pluginv1.ExecuteRequest) (*pluginv1.ExecuteEvent, bool) {
	s, end, err := c.open(c.p.rpc.Execute)
	if err != nil {
		c.report(check, CheckFail, "open an %s stream: %v", stream, err)
		return nil, false
	}
	defer end()
	if err := s.send(req, nil); err != nil {
		c.report(check, CheckFail, "send the request: %v", err)
		return nil, false
	}
	fin, ok := c.final(stream, check, s, conformCallTimeout)
	if !ok {
		return nil, false
	}
	return fin, c.ended(stream, check, s)
}

// cancelRace sends a cancel right behind the safe activity's request: whichever wins, the
// plugin must end the try with exactly one final event and then the stream.
func (c *conformer) cancelRace() {
	const check = "cancel race"
	s, end, err := c.open(c.p.rpc.Execute)
	if err != nil {
		c.report(check, CheckFail, "open an Execute stream: %v", err)
		return
	}
	defer end()
	if err := s.send(c.request(c.co.Call.Activity, c.co.Call.Input), nil); err != nil {
		c.report(check, CheckFail, "send the request: %v", err)
		return
	}
	// io.EOF: the plugin already ended the stream; what it sent before tells.
	if err := s.send(nil, &pluginv1.Cancel{Reason: wire.ReasonCancelled}); err != nil && !errors.Is(err, io.EOF) {
		c.report(check, CheckFail, "send the cancel: %v", err)
		return
	}
	fin, ok := c.final("Execute", check, s, c.opts.StopGrace)
	if !ok {
		return
	}
	if !c.ended("Execute", check, s) {
		return
	}
	if e := fin.GetError(); e != nil && e.GetType() != TypeCancelled {
		c.report(check, CheckFail, "a cancel right after the request: want a result or a %s error, got %s: %s", TypeCancelled, e.GetType(), e.GetMessage())
		return
	}
	c.report(check, CheckOK, "a cancel right after the request: one final event (%s), then the stream ended", kind(fin))
}

// slowCancelled runs the slow activity on s, waits for a heartbeat, cancels the try with
// reason and checks it ends as cancelled within the grace the host gives; done says how.
func (c *conformer) slowCancelled(stream string, s *conformStream, reason string) (done string, ok bool) {
	if err := s.send(c.request(c.co.Slow.Activity, c.co.Slow.Input), nil); err != nil {
		c.report("cancel", CheckFail, "%s: send the request: %v", stream, err)
		return "", false
	}
	beats := 0
	wait := time.NewTimer(heartbeatWait)
	defer wait.Stop()
waiting:
	for {
		select {
		case e := <-s.events:
			if e.err != nil {
				c.report("cancel", CheckFail, "%s: the stream ended while %s ran: %v", stream, c.co.Slow.Activity, e.err)
				return "", false
			}
			if hb := e.ev.GetHeartbeat(); hb != nil {
				if p := hb.GetProgress(); len(p) > 0 && !json.Valid(p) {
					c.report("heartbeats", CheckFail, "%s: progress %q is not JSON", stream, truncate(p))
					return "", false
				}
				beats++
				break waiting
			}
			if e.ev.GetError() != nil {
				c.report("cancel", CheckFail, "%s: %s ended with %s before it could be cancelled", stream, c.co.Slow.Activity, describeEvent(e.ev))
			} else {
				c.report("cancel", CheckSkip, "%s: %s ended (%s) before it could be cancelled: give --slow an input that runs for seconds", stream, c.co.Slow.Activity, kind(e.ev))
			}
			return "", false
		case <-wait.C:
			break waiting
		}
	}
	if stream == "Execute" {
		if beats > 0 {
			c.report("heartbeats", CheckOK, "%s sent a heartbeat with JSON progress", c.co.Slow.Activity)
		} else {
			c.report("heartbeats", CheckSkip, "%s sent no heartbeat within %s (optional, but a step with heartbeat_timeout needs them)", c.co.Slow.Activity, heartbeatWait)
		}
	}
	if err := s.send(nil, &pluginv1.Cancel{Reason: reason}); err != nil && !errors.Is(err, io.EOF) {
		c.report("cancel", CheckFail, "%s: send the cancel: %v", stream, err)
		return "", false
	}
	start := time.Now()
	fin, ok := c.final(stream, "cancel", s, c.opts.StopGrace)
	if !ok {
		return "", false
	}
	if e := fin.GetError(); e == nil || (e.GetType() != TypeCancelled && e.GetType() != TypeTimeout) {
		c.report("cancel", CheckFail, "%s: a cancel (reason %s) ended the try with %s; want an error of type %s", stream, reason, describeEvent(fin), TypeCancelled)
		return "", false
	}
	return fmt.Sprintf("%s: a cancel (reason %s) ended %s with %s in %s", stream, reason, c.co.Slow.Activity, fin.GetError().GetType(), time.Since(start).Round(time.Millisecond)), true
}

// lane checks Lane: a probe that ends cleanly, tries one after another on one stream, a cancel
// while idle ignored, nothing sent after a try's final event, and a clean end.
func (c *conformer) lane() {
	note := c.p.probeLanes(c.opts.StartTimeout)
	switch {
	case note != "":
		note = strings.TrimSuffix(strings.TrimPrefix(note, "wend: "), "; using Execute for every call")
		c.report("lane", CheckFail, "%s: wend falls back to Execute and warns at every start", note)
		return
	case !c.p.lanes.on:
		c.report("lane", CheckSkip, "the plugin does not serve Lane: every try opens an Execute stream (Lane is optional, and faster)")
		return
	}
	const stream = "Lane"
	s, end, err := c.open(c.p.rpc.Lane)
	if err != nil {
		c.report("lane", CheckFail, "open a Lane: %v", err)
		return
	}
	defer end()
	tries := []Sample{{conformNoSuchActivity, []byte(`{}`)}}
	if c.co.Call.Activity != "" && c.acts[c.co.Call.Activity] != nil {
		tries = append(tries, c.co.Call, c.co.Call)
	}
	tries = append(tries, Sample{conformNoSuchActivity, []byte(`{}`)})
	for i, t := range tries {
		var stray *pluginv1.Cancel
		if i == len(tries)-1 {
			stray = &pluginv1.Cancel{Reason: wire.ReasonCancelled} // idle: must be ignored
			if err := s.send(nil, stray); err != nil {
				c.report("lane", CheckFail, "send a cancel while idle: %v", err)
				return
			}
		}
		if err := s.send(c.request(t.Activity, t.Input), nil); err != nil {
			c.report("lane", CheckFail, "try %d: send: %v", i+1, err)
			return
		}
		fin, ok := c.final(stream, "lane", s, conformCallTimeout)
		if !ok {
			return
		}
		if t.Activity == conformNoSuchActivity {
			if e := fin.GetError(); e.GetType() != TypeUnknownActivity {
				after := ""
				if stray != nil {
					after = " after a cancel sent while idle (it must be ignored)"
				}
				c.report("lane", CheckFail, "try %d%s: a request for an activity it does not offer ended with %s; want %s", i+1, after, describeEvent(fin), TypeUnknownActivity)
				return
			}
		} else if fin.GetResult() == nil {
			c.report("lane", CheckFail, "try %d: %s ended with %s", i+1, t.Activity, describeEvent(fin))
			return
		}
	}
	if err := s.closeSend(); err != nil {
		c.report("lane", CheckFail, "close the send side: %v", err)
		return
	}
	if !c.ended(stream, "lane", s) {
		return
	}
	c.report("lane", CheckOK, "%d tries on one stream, a cancel while idle ignored, nothing after a final event, a clean end", len(tries))
	if c.co.Slow.Activity == "" || c.acts[c.co.Slow.Activity] == nil {
		c.report("lane cancel", CheckSkip, "no --slow activity given")
		return
	}
	s2, end2, err := c.open(c.p.rpc.Lane)
	if err != nil {
		c.report("lane cancel", CheckFail, "open a Lane: %v", err)
		return
	}
	defer end2()
	done, ok := c.slowCancelled(stream, s2, wire.ReasonDeadline)
	if !ok {
		return
	}
	c.report("cancel", CheckOK, "%s", done)
	// The host closes a lane whose try it stopped; a try in flight at the close is cancelled.
	if err := s2.send(c.request(c.co.Slow.Activity, c.co.Slow.Input), nil); err != nil {
		c.report("lane cancel", CheckFail, "send: %v", err)
		return
	}
	if err := s2.closeSend(); err != nil {
		c.report("lane cancel", CheckFail, "close the send side: %v", err)
		return
	}
	fin, ok := c.final(stream, "lane cancel", s2, c.opts.StopGrace)
	if !ok {
		return
	}
	if fin.GetError().GetType() != TypeCancelled {
		c.report("lane cancel", CheckFail, "closing the send side with a try in flight ended it with %s; want a %s error", describeEvent(fin), TypeCancelled)
		return
	}
	if c.ended(stream, "lane cancel", s2) {
		c.report("lane cancel", CheckOK, "closing the send side cancels the try in flight, then the lane ends")
	}
}

// shutdown checks that the plugin exits on GRPCController.Shutdown within the grace.
func (c *conformer) shutdown() {
	c.p.stop()
	if c.p.killedAtStop {
		c.report("shutdown", CheckFail, "still running %s after plugin.GRPCController/Shutdown; its process group was killed", c.opts.StopGrace)
		return
	}
	c.report("shutdown", CheckOK, "exited on plugin.GRPCController/Shutdown")
}

// unknownActivity checks the answer to a request for an activity the plugin does not offer.
func (c *conformer) unknownActivity(check string, ev *pluginv1.ExecuteEvent) {
	e := ev.GetError()
	if e.GetType() != TypeUnknownActivity || !e.GetNonRetryable() {
		c.report(check, CheckFail, "a request for an activity it does not offer ended with %s; want a non-retryable %s error (the host retries other types)", describeEvent(ev), TypeUnknownActivity)
		return
	}
	c.report(check, CheckOK, "an unknown activity gets a non-retryable %s error, then the stream ends", TypeUnknownActivity)
}

// result checks the safe activity's answer: a result whose output is JSON matching its schema.
func (c *conformer) result(check, activity string, ev *pluginv1.ExecuteEvent) {
	if ev.GetResult() == nil {
		c.report(check, CheckFail, "%s ended with %s; want a result (give --input that succeeds)", activity, describeEvent(ev))
		return
	}
	out, err := checkOutput(c.p.name, activity, ev.GetResult().GetOutput())
	if err != nil {
		c.report(check, CheckFail, "%v", err)
		return
	}
	if a := c.acts[activity]; len(a.OutputSchema) > 0 && c.co.Schema != nil {
		if validate, err := c.co.Schema(a.OutputSchema); err == nil {
			if err := validate(out); err != nil {
				c.report(check, CheckFail, "%s's output %s does not match its output schema: %v", activity, truncate(out), err)
				return
			}
		}
	}
	c.report(check, CheckOK, "%s returned %s, then the stream ended", activity, truncate(out))
}

func (c *conformer) request(activity string, input []byte) *pluginv1.ExecuteRequest {
	return request(historyCall(activity, input, time.Now().Add(conformCallTimeout)))
}

// final reads s up to the try's final event, allowing wait for it; heartbeats are checked on
// the way.
func (c *conformer) final(stream, check string, s *conformStream, wait time.Duration) (*pluginv1.ExecuteEvent, bool) {
	t := time.NewTimer(wait)
	defer t.Stop()
	for {
		select {
		case e := <-s.events:
			if e.err != nil {
				why := e.err.Error()
				if errors.Is(e.err, io.EOF) {
					why = "it ended cleanly"
				}
				c.report(check, CheckFail, "%s: the stream ended before the try's result or error (%s)%s", stream, why, c.p.stderr.last())
				return nil, false
			}
			if hb := e.ev.GetHeartbeat(); hb != nil {
				if p := hb.GetProgress(); len(p) > 0 && !json.Valid(p) {
					c.report(check, CheckFail, "%s: heartbeat progress %q is not JSON", stream, truncate(p))
					return nil, false
				}
				continue
			}
			if e.ev.GetResult() == nil && e.ev.GetError() == nil {
				c.report(check, CheckFail, "%s: an event that is neither heartbeat, result nor error", stream)
				return nil, false
			}
			return e.ev, true
		case <-t.C:
			c.report(check, CheckFail, "%s: no result or error within %s", stream, wait)
			return nil, false
		}
	}
}

// ended checks that after a try's final event the plugin sends nothing more and the stream
// ends cleanly (Execute by itself, Lane once the host closed its side).
func (c *conformer) ended(stream, check string, s *conformStream) bool {
	select {
	case e := <-s.events:
		switch {
		case e.err == nil:
			c.report(check, CheckFail, "%s: an event after the try's final one: %s (late events are dropped, and on a lane they would reach the next try)", stream, describeEvent(e.ev))
			return false
		case !errors.Is(e.err, io.EOF):
			c.report(check, CheckFail, "%s: after the final event the stream failed: %v", stream, e.err)
			return false
		}
		return true
	case <-time.After(c.opts.StopGrace):
		c.report(check, CheckFail, "%s: the stream did not end within %s of the final event", stream, c.opts.StopGrace)
		return false
	}
}

// conformStream is a stream whose events a goroutine reads into a channel, so each wait can
// be bounded.
type conformStream struct {
	s      pluginv1.Activities_ExecuteClient
	events chan event
}

func (c *conformer) open(rpc func(context.Context, ...grpc.CallOption) (pluginv1.Activities_ExecuteClient, error)) (*conformStream, func(), error) {
	ctx, cancel := context.WithCancel(c.ctx)
	s, err := rpc(ctx)
	if err != nil {
		cancel()
		return nil, nil, err
	}
	cs := &conformStream{s: s, events: make(chan event, 64)}
	go func() {
		for {
			ev, err := s.Recv()
			select {
			case cs.events <- event{ev, err}:
			case <-ctx.Done():
				return
			}
			if err != nil {
				return
			}
		}
	}()
	return cs, cancel, nil
}

func (s *conformStream) send(req *pluginv1.ExecuteRequest, cancel *pluginv1.Cancel) error {
	if req != nil {
		if err := s.s.Send(&pluginv1.ExecuteInput{Input: &pluginv1.ExecuteInput_Request{Request: req}}); err != nil {
			return err
		}
	}
	if cancel != nil {
		return s.s.Send(&pluginv1.ExecuteInput{Input: &pluginv1.ExecuteInput_Cancel{Cancel: cancel}})
	}
	return nil
}

func (s *conformStream) closeSend() error { return s.s.CloseSend() }

func kind(ev *pluginv1.ExecuteEvent) string {
	switch {
	case ev.GetResult() != nil:
		return "a result"
	case ev.GetError() != nil:
		return "a " + ev.GetError().GetType() + " error"
	case ev.GetHeartbeat() != nil:
		return "a heartbeat"
	}
	return "an empty event"
}

func describeEvent(ev *pluginv1.ExecuteEvent) string {
	if e := ev.GetError(); e != nil {
		return fmt.Sprintf("a %s error (non_retryable %v): %s", e.GetType(), e.GetNonRetryable(), e.GetMessage())
	}
	if r := ev.GetResult(); r != nil {
		return "the result " + truncate(r.GetOutput())
	}
	return kind(ev)
}

func truncate(b []byte) string {
	const max = 120
	if len(b) > max {
		return string(b[:max]) + "…"
	}
	return string(b)
}
