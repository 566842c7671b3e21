package tracing

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/wendflow/wend/history"
)

// ErrConfig is returned by FromEnv for OTEL_* values wend cannot honour.
var ErrConfig = errors.New("bad trace configuration")

// Provider is a configured tracer provider; its Shutdown flushes the spans still queued.
type Provider struct {
	tp *sdktrace.TracerProvider
	// direct are tp's span processors when spans are handed to them finished (spanOut), nil
	// when they go through tp's tracer; res is the resource tp gives its spans.
	direct  []sdktrace.SpanProcessor
	res     *resource.Resource
	blocks  *attrBlocks  // the direct spans' attribute blocks, handed back by batcher
	batcher *spanBatcher // the direct spans' batch processor (FromEnv's); nil otherwise

	mu        sync.Mutex
	observers []*Observer
	stepIDs   func(history.Started) map[string]string // NameSteps
}

// FromEnv reads the standard variables: OTEL_TRACES_EXPORTER (a comma-separated list of otlp,
// console and none; none when unset), OTEL_SDK_DISABLED, OTEL_SERVICE_NAME (wend when neither
// it nor OTEL_RESOURCE_ATTRIBUTES names the service) and OTEL_EXPORTER_OTLP_PROTOCOL or
// OTEL_EXPORTER_OTLP_TRACES_PROTOCOL (grpc, the default, or http/protobuf). The OTLP exporter reads its own OTEL_EXPORTER_OTLP_* variables (endpoint, headers,
// certificates, timeout), the batch processor OTEL_BSP_*, the sampler OTEL_TRACES_SAMPLER.
// Spans go finished (spanOut) to wend's batch processor (spanBatcher, which reads OTEL_BSP_*
// as the SDK's does) unless a sampler or an attribute limit is set (tracerVars): then
// through the SDK's tracer, which applies it, to the SDK's batch processor.
// console writes spans as JSON lines to console (wend's stderr: its stdout carries results),
// one write a batch. It
// returns nil when no exporter is configured.
func FromEnv(ctx context.Context, getenv func(string) string, console io.Writer) (*Provider, error) {
	if strings.EqualFold(strings.TrimSpace(getenv("OTEL_SDK_DISABLED")), "true") {
		return nil, nil
	}
	var exps []sdktrace.SpanExporter
	for name := range strings.SplitSeq(getenv("OTEL_TRACES_EXPORTER"), ",") {
		exp, err := exporter(ctx, strings.TrimSpace(name), getenv, console)
		if err != nil {
			return nil, err
		}
		if exp != nil {
			exps = append(exps, exp)
		}
	}
	if len(exps) == 0 {
		return nil, nil
	}
	res, err := serviceResource(ctx, getenv)
	if err != nil {
		return nil, err
	}
	direct := true
	for _, k := range tracerVars {
		if getenv(k) != "" {
			direct = false
		}
	}
	return batched(res, direct, getenv, exps...), nil
}

func exporter(ctx context.Context, name string, getenv func(string) string, console io.Writer) (sdktrace.SpanExporter, error) {
	switch name {
	case "", "none":
		return nil, nil
	case "console":
		return newConsoleExporter(console)
	case "otlp":
		return otlpExporter(ctx, getenv)
	}
	return nil, fmt.Errorf("%w: OTEL_TRACES_EXPORTER=%s: unknown exporter %q; use otlp, console or none", ErrConfig, getenv("OTEL_TRACES_EXPORTER"), name)
}

// otlpExporter is the OTLP exporter of the protocol the variables choose:
// OTEL_EXPORTER_OTLP_TRACES_PROTOCOL, else OTEL_EXPORTER_OTLP_PROTOCOL, else grpc (wend's
// default, as before http/protobuf was offered). Each exporter reads its own endpoint
// variables; over HTTP the spans go to the endpoint's /v1/traces.
func otlpExporter(ctx context.Context, getenv func(string) string) (sdktrace.SpanExporter, error) {
	name, proto := "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"))
	if proto == "" {
		name, proto = "OTEL_EXPORTER_OTLP_PROTOCOL", strings.TrimSpace(getenv("OTEL_EXPORTER_OTLP_PROTOCOL"))
	}
	switch proto {
	case "", "grpc":
		return otlptracegrpc.New(ctx)
	case "http/protobuf":
		return otlptracehttp.New(ctx)
	case "http/json":
		return nil, fmt.Errorf("%w: %s=http/json: wend exports OTLP as grpc or http/protobuf; set it to one of them", ErrConfig, name)
	}
	return nil, fmt.Errorf("%w: %s=%s: unknown protocol; use grpc or http/protobuf", ErrConfig, name, proto)
}

// serviceResource is the SDK's default resource (OTEL_RESOURCE_ATTRIBUTES, OTEL_SERVICE_NAME,
// the SDK's own attributes), with service.name wend when the variables leave it unset.
func serviceResource(ctx context.Context, getenv func(string) string) (*resource.Resource, error) {
	named := getenv("OTEL_SERVICE_NAME") != ""
	for kv := range strings.SplitSeq(getenv("OTEL_RESOURCE_ATTRIBUTES"), ",") {
		if k, _, _ := strings.Cut(kv, "="); strings.TrimSpace(k) == "service.name" {
			named = true
		}
	}
	opts := []resource.Option{resource.WithTelemetrySDK()}
	if !named {
		opts = append(opts, resource.WithAttributes(attribute.String("service.name", "wend")))
	}
	opts = append(opts, resource.WithFromEnv()) // the variables win over the default name
	res, err := resource.New(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("%w: OTEL_RESOURCE_ATTRIBUTES: %w", ErrConfig, err)
	}
	return res, nil
}

// Shutdown builds the spans of the events its observers queued, exports the spans still
// queued and stops the exporters; ctx bounds the wait. The engine is stopped first, so no
// event is observed after it.
func (p *Provider) Shutdown(ctx context.Context) error {
	if p == nil {
		return nil
	}
	p.mu.Lock()
	observers := p.observers
	p.mu.Unlock()
	var errs []error
	for _, o := range observers {
		errs = append(errs, o.close(ctx))
	}
	errs = append(errs, p.tp.Shutdown(ctx))
	if n := p.DroppedSpans(); n > 0 && len(observers) > 0 {
		observers[0].logf("wend: traces: %d spans found the export queue full (the exporter could not keep up); they were not exported", n)
	}
	return errors.Join(errs...)
}

// DroppedSpans is how many finished spans found the export queue full (OTEL_BSP_MAX_QUEUE_SIZE
// spans waiting for the exporter) and were dropped, not exported.
func (p *Provider) DroppedSpans() uint64 {
	if p == nil || p.batcher == nil {
		return 0
	}
	return p.batcher.DroppedSpans()
}
