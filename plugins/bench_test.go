package plugins

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/sdk/go/fastlane"
	pluginv1 "github.com/wendflow/wend/sdk/go/proto/wend/plugin/v1"
	"github.com/wendflow/wend/sdk/go/wire"
)

// The benchmarks run the host and a plain gRPC client of the same plugin binary (the test
// plugin's plaingrpc mode: unix socket, mTLS, no go-plugin) in the same run, and report
// medians and plain/host ratios as custom metrics; ns/op covers both sides and is not the figure.
//
//	go test -run '^$' -bench . -benchtime 2000x ./plugins/

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

// BenchmarkStart: plugin start to ready (handshake read and first RPC answered).
func BenchmarkStart(b *testing.B) {
	var host, plain []time.Duration
	for b.Loop() {
		h, err := New([]Config{{Name: "go", Command: []string{bins.goExample}}}, Options{Log: func(string, string) {}})
		if err != nil {
			b.Fatal(err)
		}
		start := time.Now()
		if _, err := h.process("go"); err != nil {
			b.Fatal(err)
		}
		host = append(host, time.Since(start))
		h.Close()

		start = time.Now()
		pc := startPlain(b)
		if _, err := pc.rpc.Describe(context.Background(), &pluginv1.DescribeRequest{}); err != nil {
			b.Fatal(err)
		}
		plain = append(plain, time.Since(start))
		pc.close()
	}
	b.ReportMetric(float64(median(host).Microseconds())/1000, "host-median-ms")
	b.ReportMetric(float64(median(plain).Microseconds())/1000, "plain-median-ms")
	b.ReportMetric(float64(median(plain))/float64(median(host)), "plain/host")
}

// BenchmarkCallSequential: one no-op call at a time, host and plain (over a reused lane, as
// the host calls) interleaved; then, in a phase of its own, plain calls over a new Execute
// stream each (how a plugin without lanes is called). That phase runs apart because closing a
// stream leaves both processes work that would land in the next call's time.
func BenchmarkCallSequential(b *testing.B) {
	h, pc := benchPair(b)
	ctx := context.Background()
	c := call("t", "noop", nil)
	var host, plain, plainExec []time.Duration
	for b.Loop() {
		start := time.Now()
		if _, err := h.Execute(ctx, c, nil); err != nil {
			b.Fatal(err)
		}
		host = append(host, time.Since(start))
		start = time.Now()
		if err := pc.noop(ctx); err != nil {
			b.Fatal(err)
		}
		plain = append(plain, time.Since(start))
	}
	for range len(host) {
		start := time.Now()
		if err := pc.noopExecute(ctx); err != nil {
			b.Fatal(err)
		}
		plainExec = append(plainExec, time.Since(start))
	}
	b.ReportMetric(float64(median(host).Nanoseconds())/1000, "host-median-µs")
	b.ReportMetric(float64(median(plain).Nanoseconds())/1000, "plain-median-µs")
	b.ReportMetric(float64(median(plainExec).Nanoseconds())/1000, "plain-execute-median-µs")
	b.ReportMetric(float64(median(plain))/float64(median(host)), "plain/host")
}

// BenchmarkCallConcurrent8: eight callers at once; throughput of each side.
func BenchmarkCallConcurrent8(b *testing.B) {
	h, pc := benchPair(b)
	ctx := context.Background()
	c := call("t", "noop", nil)
	run := func(do func() error) float64 {
		var wg sync.WaitGroup
		start := time.Now()
		per := max(b.N/8, 1)
		for range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range per {
					if err := do(); err != nil {
						b.Error(err)
						return
					}
				}
			}()
		}
		wg.Wait()
		return float64(per*8) / time.Since(start).Seconds()
	}
	b.ResetTimer()
	// Alternate the sides so drift in machine load does not favour one.
	var hostRate, plainRate float64
	for range 2 {
		hostRate += run(func() error { _, err := h.Execute(ctx, c, nil); return err }) / 2
		plainRate += run(func() error { return pc.noop(ctx) }) / 2
	}
	b.ReportMetric(hostRate, "host-calls/s")
	b.ReportMetric(plainRate, "plain-calls/s")
	b.ReportMetric(hostRate/plainRate, "host/plain")
}

func benchPair(b *testing.B) (*Host, *plainClient) {
	h, err := New([]Config{testPlugin("t", "")}, Options{Log: func(string, string) {}})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { h.Close() })
	if _, err := h.Execute(context.Background(), call("t", "noop", nil), nil); err != nil {
		b.Fatal(err)
	}
	pc := startPlain(b)
	b.Cleanup(pc.close)
	return h, pc
}

// plainClient is the baseline: the test plugin serving plain gRPC over a unix socket with
// mutual TLS and the same gRPC options, as go-plugin's transport is on Linux, with no go-plugin
// on either side. noop calls the way the host does, over a reused Lane stream; noopExecute
// opens an Execute stream per call, the way a plugin without lanes is called.
type plainClient struct {
	cmd   *exec.Cmd
	conn  *grpc.ClientConn
	rpc   pluginv1.ActivitiesClient
	lanes chan pluginv1.Activities_LaneClient
}

func startPlain(b *testing.B) *plainClient {
	b.Helper()
	certPEM, cert := clientCert(b)
	cmd := exec.Command(bins.testPlugin)
	cmd.Env = []string{"WEND_TESTPLUGIN_MODE=plaingrpc", "PLUGIN_CLIENT_CERT=" + string(certPEM)}
	cmd.SysProcAttr = groupAttr()
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		b.Fatal(err)
	}
	path, certB64, _ := strings.Cut(strings.TrimSpace(line), "|")
	der, err := base64.RawStdEncoding.DecodeString(certB64)
	if err != nil {
		b.Fatal(err)
	}
	serverCert, err := x509.ParseCertificate(der)
	if err != nil {
		b.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(serverCert)
	conn, err := grpc.NewClient("passthrough:///plain", append(wire.DialOptions(), grpc.WithTransportCredentials(credentials.NewTLS(&tls.Config{
		Certificates: []tls.Certificate{cert}, RootCAs: pool, ServerName: "localhost", MinVersion: tls.VersionTLS12,
	})), grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "unix", path)
	}))...)
	if err != nil {
		b.Fatal(err)
	}
	return &plainClient{cmd: cmd, conn: conn, rpc: pluginv1.NewActivitiesClient(conn), lanes: make(chan pluginv1.Activities_LaneClient, 64)}
}

var noopInput = &pluginv1.ExecuteInput{Input: &pluginv1.ExecuteInput_Request{Request: &pluginv1.ExecuteRequest{Activity: "noop"}}}

func (p *plainClient) noop(ctx context.Context) error {
	var lane pluginv1.Activities_LaneClient
	select {
	case lane = <-p.lanes:
	default:
		var err error
		if lane, err = p.rpc.Lane(ctx); err != nil {
			return err
		}
	}
	if err := lane.Send(noopInput); err != nil {
		return err
	}
	if _, err := lane.Recv(); err != nil {
		return err
	}
	p.lanes <- lane
	return nil
}

func (p *plainClient) noopExecute(ctx context.Context) error {
	stream, err := p.rpc.Execute(ctx)
	if err != nil {
		return err
	}
	if err := stream.Send(noopInput); err != nil {
		return err
	}
	_, err = stream.Recv()
	return err
}

func (p *plainClient) close() {
	p.conn.Close()
	killGroupOf(p.cmd.Process.Pid)
	_ = p.cmd.Wait()
}

// clientCert makes a one-time client certificate the way go-plugin's AutoMTLS does.
func clientCert(b *testing.B) ([]byte, tls.Certificate) {
	key, err := ecdsa.GenerateKey(elliptic.P521(), rand.Reader)
	if err != nil {
		b.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "localhost"}, DNSNames: []string{"localhost"},
		NotBefore: time.Now().Add(-time.Minute), NotAfter: time.Now().Add(time.Hour),
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth, x509.ExtKeyUsageServerAuth},
		IsCA:        true, BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		b.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

// BenchmarkExampleCall: a no-op echo through the host to each example plugin, sequential, over
// lanes and then (lanes switched off for the process) over an Execute stream per call.
//
//	go test -run '^$' -bench ExampleCall -benchtime 1000x ./plugins/
func BenchmarkExampleCall(b *testing.B) {
	ctx := context.Background()
	for _, cfg := range exampleConfigs(b) {
		h, err := New([]Config{cfg}, Options{Log: func(string, string) {}})
		if err != nil {
			b.Fatal(err)
		}
		c := call(cfg.Name, "echo", map[string]int{"i": 1})
		measure := func() time.Duration {
			ds := make([]time.Duration, 0, b.N)
			for range b.N {
				start := time.Now()
				if _, err := h.Execute(ctx, c, nil); err != nil {
					b.Fatal(err)
				}
				ds = append(ds, time.Since(start))
			}
			return median(ds)
		}
		p, err := h.process(cfg.Name)
		if err != nil {
			b.Fatal(err)
		}
		if !p.lanes.on {
			b.Fatalf("%s: lanes are off", cfg.Name)
		}
		measure() // warm up
		lane := measure()
		p.lanes.close()
		p.lanes.on = false
		exec := measure()
		h.Close()
		b.ReportMetric(float64(lane.Nanoseconds())/1000, cfg.Name+"-lane-median-µs")
		b.ReportMetric(float64(exec.Nanoseconds())/1000, cfg.Name+"-execute-median-µs")
	}
}

// BenchmarkRouterPrepare is what the engine's Prepare of a try costs through the Router with
// the plugin running: finding the declaration's host and checking the plugin's file (one
// stat). ns/op is the figure.
func BenchmarkRouterPrepare(b *testing.B) {
	r := NewRouter(Options{Log: func(string, string) {}})
	defer r.Close()
	c := call("demo", "greet", nil)
	c.Declared = history.PluginRef{Command: []string{bins.goExample}, Dir: b.TempDir(), Env: []string{"WEND_BENCH=1"}}
	if err := r.Prepare(context.Background(), c); err != nil { // starts the plugin
		b.Fatal(err)
	}
	for b.Loop() {
		if err := r.Prepare(context.Background(), c); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPluginsSideBySide: echo through the host to several plugin processes in turn, one
// call each, so that load on the machine falls on all alike and each process waits between its
// calls as a plugin does between a run's steps. By default the Go example with its GOMAXPROCS
// left to Go and set to 1 (Config.Env): with one P the plugin's runtime wakes no second thread
// when gRPC readies a goroutine (its loopy writer, the handler). WEND_BENCH_PLUGINS names other
// builds to compare, e.g. two builds of a plugin before and after an SDK change:
// "old=/tmp/old-plugin;new=/tmp/new-plugin", each NAME=COMMAND[@VAR=VALUE,...].
// WEND_BENCH_EXECUTE=1 switches the processes' lanes off: every call opens an Execute stream.
//
//	go test -run '^$' -bench PluginsSideBySide -benchtime 6000x ./plugins/
func BenchmarkPluginsSideBySide(b *testing.B) {
	ctx := context.Background()
	cfgs := []Config{
		{Name: "default", Command: []string{bins.goExample}},
		{Name: "gomaxprocs1", Command: []string{bins.goExample}, Env: []string{"GOMAXPROCS=1"}},
	}
	if v := os.Getenv("WEND_BENCH_PLUGINS"); v != "" {
		cfgs = nil
		for _, spec := range strings.Split(v, ";") {
			name, rest, _ := strings.Cut(spec, "=")
			cmd, env, _ := strings.Cut(rest, "@")
			cfg := Config{Name: name, Command: strings.Fields(cmd)}
			if env != "" {
				cfg.Env = strings.Split(env, ",")
			}
			cfgs = append(cfgs, cfg)
		}
	}
	h, err := New(cfgs, Options{Log: func(string, string) {}})
	if err != nil {
		b.Fatal(err)
	}
	defer h.Close()
	ds := make([][]time.Duration, len(cfgs))
	round := func(keep bool) {
		for i, cfg := range cfgs {
			start := time.Now()
			if _, err := h.Execute(ctx, call(cfg.Name, "echo", map[string]int{"i": 1}), nil); err != nil {
				b.Fatal(err)
			}
			if keep {
				ds[i] = append(ds[i], time.Since(start))
			}
		}
	}
	round(false) // start them
	if os.Getenv("WEND_BENCH_EXECUTE") == "1" {
		for _, cfg := range cfgs {
			p, err := h.process(cfg.Name)
			if err != nil {
				b.Fatal(err)
			}
			p.lanes.close()
			p.lanes.on = false
		}
	}
	for range 200 { // warm up
		round(false)
	}
	for range b.N {
		round(true)
	}
	first := median(ds[0])
	for i, cfg := range cfgs {
		m := median(ds[i])
		b.ReportMetric(float64(m.Nanoseconds())/1000, cfg.Name+"-median-µs")
		if i > 0 {
			b.ReportMetric(float64(m)/float64(first), cfg.Name+"/"+cfgs[0].Name)
		}
	}
}

// BenchmarkFastLane: echo through the host to the Go example twice over, one process on gRPC
// lanes (the plugin told not to offer a fast lane) and one on its fast lane, one call each in
// turn so that the machine's load falls on both alike. fast/grpc is the figure. gap-400µs
// sleeps before each call, as a sequential workflow's call follows a commit: both processes
// sit idle and their threads go to sleep.
//
//	go test -run '^$' -bench FastLane -benchtime 6000x ./plugins/
func BenchmarkFastLane(b *testing.B) {
	ctx := context.Background()
	h, cfgs, _ := laneHosts(b)
	for _, gap := range []time.Duration{0, 400 * time.Microsecond} {
		b.Run("gap-"+gap.String(), func(b *testing.B) {
			ds := make([][]time.Duration, len(cfgs))
			round := func(keep bool) {
				for i, cfg := range cfgs {
					if gap > 0 {
						time.Sleep(gap)
					}
					start := time.Now()
					if _, err := h.Execute(ctx, call(cfg.Name, "echo", map[string]int{"i": 1}), nil); err != nil {
						b.Fatal(err)
					}
					if keep {
						ds[i] = append(ds[i], time.Since(start))
					}
				}
			}
			for range 200 { // warm up
				round(false)
			}
			for range b.N {
				round(true)
			}
			g, f := median(ds[0]), median(ds[1])
			b.ReportMetric(float64(g.Nanoseconds())/1000, "grpc-median-µs")
			b.ReportMetric(float64(f.Nanoseconds())/1000, "fast-median-µs")
			b.ReportMetric(float64(f)/float64(g), "fast/grpc")
		})
	}
}

// laneHosts starts the Go example twice through one host, closed when b ends: "grpc" told not
// to offer a fast lane, "fast" on its fast lane. It returns the two processes in that order.
func laneHosts(b *testing.B) (*Host, []Config, []*process) {
	cfgs := []Config{
		{Name: "grpc", Command: []string{bins.goExample}, Env: []string{fastlane.EnvVar + "=0"}},
		{Name: "fast", Command: []string{bins.goExample}},
	}
	h, err := New(cfgs, Options{Log: func(string, string) {}})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = h.Close() })
	ps := make([]*process, len(cfgs))
	for i, cfg := range cfgs {
		if _, err := h.Execute(context.Background(), call(cfg.Name, "echo", 1), nil); err != nil { // start it
			b.Fatal(err)
		}
		p, err := h.process(cfg.Name)
		if err != nil {
			b.Fatal(err)
		}
		if fast := p.lanes.fast != nil; fast != (i == 1) {
			b.Fatalf("%s: fast lane %v", cfg.Name, fast)
		}
		ps[i] = p
	}
	return h, cfgs, ps
}
