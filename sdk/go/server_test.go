package sdk

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/test/bufconn"

	pluginv1 "github.com/wendflow/wend/sdk/go/proto/wend/plugin/v1"
)

// serve runs acts on an in-memory gRPC server and returns a client.
func serve(t *testing.T, acts Activities) pluginv1.ActivitiesClient {
	t.Helper()
	l := bufconn.Listen(1 << 20)
	s := grpc.NewServer(grpc.MaxRecvMsgSize(16<<20), grpc.MaxSendMsgSize(16<<20))
	pluginv1.RegisterActivitiesServer(s, NewServer(acts))
	go s.Serve(l)
	t.Cleanup(s.Stop)
	conn, err := grpc.NewClient("passthrough:///buf", grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return l.DialContext(ctx) }),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(16<<20)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return pluginv1.NewActivitiesClient(conn)
}

// execute runs one try and returns its events.
func execute(t *testing.T, c pluginv1.ActivitiesClient, req *pluginv1.ExecuteRequest, cancelAfter time.Duration) []*pluginv1.ExecuteEvent {
	t.Helper()
	stream, err := c.Execute(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if err := stream.Send(&pluginv1.ExecuteInput{Input: &pluginv1.ExecuteInput_Request{Request: req}}); err != nil {
		t.Fatal(err)
	}
	if cancelAfter > 0 {
		time.AfterFunc(cancelAfter, func() {
			stream.Send(&pluginv1.ExecuteInput{Input: &pluginv1.ExecuteInput_Cancel{Cancel: &pluginv1.Cancel{Reason: "cancelled"}}})
		})
	}
	var evs []*pluginv1.ExecuteEvent
	for {
		ev, err := stream.Recv()
		if err != nil {
			return evs
		}
		evs = append(evs, ev)
	}
}

type nameIn struct {
	Name string `json:"name"`
}

func TestExecute(t *testing.T) {
	c := serve(t, Activities{
		"greet": Func(func(ctx *Context, in nameIn) (map[string]string, error) {
			_ = ctx.Heartbeat(map[string]int{"step": 1})
			return map[string]string{"greeting": "hello, " + in.Name, "exec": ctx.ActivityExecutionID}, nil
		}, `{"type":"object"}`, ""),
		"panic": Func(func(*Context, struct{}) (int, error) { panic("boom") }, "", ""),
		"plain": Func(func(*Context, struct{}) (int, error) { return 0, errors.New("disk full") }, "", ""),
		"typed": Func(func(*Context, struct{}) (int, error) {
			return 0, NonRetryable("CardDeclined", "no").WithDetails(map[string]int{"code": 51})
		}, "", ""),
		"big":     Func(func(*Context, struct{}) (string, error) { return strings.Repeat("x", MaxPayloadBytes), nil }, "", ""),
		"waits":   Func(func(ctx *Context, _ struct{}) (int, error) { <-ctx.Done(); return 0, ctx.Err() }, "", ""),
		"timeout": Func(func(ctx *Context, _ struct{}) (int, error) { <-ctx.Done(); return 0, ctx.Err() }, "", ""),
	})
	tests := []struct {
		name     string
		req      *pluginv1.ExecuteRequest
		cancel   time.Duration
		beats    int
		result   string
		errType  string
		errMsg   string
		nonRetry bool
	}{
		{name: "result and heartbeat", req: &pluginv1.ExecuteRequest{Activity: "greet", Input: []byte(`{"name":"ada"}`), ActivityExecutionId: "e1"},
			beats: 1, result: `{"exec":"e1","greeting":"hello, ada"}`},
		{name: "bad input", req: &pluginv1.ExecuteRequest{Activity: "greet", Input: []byte(`[1]`)},
			errType: TypeBadInput, errMsg: "decode input of greet: json: cannot unmarshal array", nonRetry: true},
		{name: "unknown activity", req: &pluginv1.ExecuteRequest{Activity: "nope"},
			errType: TypeUnknownActivity, errMsg: `unknown activity "nope" (have ["big","greet","panic","plain","timeout","typed","waits"])`, nonRetry: true},
		{name: "panic", req: &pluginv1.ExecuteRequest{Activity: "panic"}, errType: TypePanic, errMsg: "panic panicked: boom"},
		{name: "plain error", req: &pluginv1.ExecuteRequest{Activity: "plain"}, errType: TypeError, errMsg: "disk full"},
		{name: "typed error", req: &pluginv1.ExecuteRequest{Activity: "typed"}, errType: "CardDeclined", errMsg: "no", nonRetry: true},
		{name: "output too large", req: &pluginv1.ExecuteRequest{Activity: "big"},
			errType: TypePayloadTooLarge, errMsg: "output of big is 2097154 bytes, over the 2097152-byte limit", nonRetry: true},
		{name: "input too large", req: &pluginv1.ExecuteRequest{Activity: "greet", Input: make([]byte, MaxPayloadBytes+1)},
			errType: TypePayloadTooLarge, errMsg: "input of greet is 2097153 bytes", nonRetry: true},
		{name: "cancel", req: &pluginv1.ExecuteRequest{Activity: "waits"}, cancel: 50 * time.Millisecond,
			errType: TypeCancelled, errMsg: "cancelled by the host"},
		{name: "deadline", req: &pluginv1.ExecuteRequest{Activity: "timeout", DeadlineUnixNanos: time.Now().Add(50 * time.Millisecond).UnixNano()},
			errType: TypeTimeout, errMsg: "context deadline exceeded"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			evs := execute(t, c, tt.req, tt.cancel)
			if len(evs) != tt.beats+1 {
				t.Fatalf("%d events, want %d heartbeats and an end: %v", len(evs), tt.beats, evs)
			}
			for _, ev := range evs[:tt.beats] {
				if ev.GetHeartbeat() == nil {
					t.Fatalf("event %v, want a heartbeat", ev)
				}
			}
			last := evs[len(evs)-1]
			if tt.result != "" {
				var got, want any
				json.Unmarshal(last.GetResult().GetOutput(), &got)
				json.Unmarshal([]byte(tt.result), &want)
				if b1, _ := json.Marshal(got); string(b1) != tt.result {
					t.Fatalf("result %s, want %s", last.GetResult().GetOutput(), tt.result)
				}
				return
			}
			e := last.GetError()
			if e == nil || e.Type != tt.errType || !strings.Contains(e.Message, tt.errMsg) || e.NonRetryable != tt.nonRetry {
				t.Fatalf("got %v, want %s %q non_retryable=%v", last, tt.errType, tt.errMsg, tt.nonRetry)
			}
		})
	}
}

func TestTypedErrorDetails(t *testing.T) {
	e := NonRetryable("CardDeclined", "no").WithDetails(map[string]int{"code": 51})
	if string(e.details()) != `{"code":51}` || e.Error() != "CardDeclined: no" {
		t.Fatalf("got %s %q", e.details(), e.Error())
	}
}

func TestDescribeSorted(t *testing.T) {
	c := serve(t, Activities{
		"b": Func(func(*Context, struct{}) (int, error) { return 0, nil }, `{"type":"object"}`, `{"type":"integer"}`).Describe("bee"),
		"a": Func(func(*Context, struct{}) (int, error) { return 0, nil }, "", ""),
	})
	resp, err := c.Describe(context.Background(), &pluginv1.DescribeRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Activities) != 2 || resp.Activities[0].Name != "a" || resp.Activities[1].Description != "bee" ||
		string(resp.Activities[1].OutputSchema) != `{"type":"integer"}` {
		t.Fatalf("got %v", resp.Activities)
	}
}

func TestFuncRejectsInvalidSchema(t *testing.T) {
	defer func() {
		if r := recover(); r == nil || !strings.Contains(r.(string), "input schema is not valid JSON") {
			t.Fatalf("recover = %v", r)
		}
	}()
	Func(func(*Context, struct{}) (int, error) { return 0, nil }, `{"type":`, "")
}

func TestInfoCarriesTheTraceParent(t *testing.T) {
	tests := []struct{ name, traceparent string }{
		{"given", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"},
		{"none", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			info := infoOf(&pluginv1.ExecuteRequest{Activity: "a", Traceparent: tt.traceparent})
			if info.TraceParent != tt.traceparent {
				t.Fatalf("Info.TraceParent = %q, want %q", info.TraceParent, tt.traceparent)
			}
		})
	}
}
