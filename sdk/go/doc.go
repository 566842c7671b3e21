// Package sdk is what a Go activity plugin imports: it serves a map of activity functions over
// the wend.plugin.v1 gRPC service through hashicorp/go-plugin.
//
//	func main() {
//		sdk.Serve(sdk.Activities{
//			"greet": sdk.Func(greet, `{"type":"object","required":["name"]}`, `{"type":"object"}`),
//		})
//	}
//
//	func greet(ctx *sdk.Context, in struct{ Name string `json:"name"` }) (map[string]string, error) {
//		return map[string]string{"greeting": "hello, " + in.Name}, nil
//	}
//
// Invariants the package keeps for plugin authors:
//   - A handler runs once per try. ctx carries the try's identity (ctx.ActivityExecutionID is
//     the idempotency key, stable across tries; ctx.TraceParent, when set, is the try's W3C
//     trace context, for the plugin's own spans to join the run's trace) and is cancelled
//     when the deadline passes or the host cancels the try; handlers should return soon
//     after. ctx is made on its first use (any of its methods): only then does a lane (the
//     one stream that carries the host's tries one after another) start reading the host's
//     Cancel for the try, so a handler that never looks at ctx costs no goroutine and no
//     thread wake-up per call.
//   - Inputs and outputs are at most MaxPayloadBytes; a larger output fails the try with a
//     non-retryable PayloadTooLarge error rather than a transport error.
//   - A plain error is retryable; use NonRetryable for errors a retry cannot fix. A panic fails
//     the try (type "Panic"), it does not kill the plugin.
//   - The plugin exits within about a second when its host process goes away, so a killed host
//     leaves no plugin behind even if the parent-death signal was lost.
//   - When the host asks, Serve offers a fast lane: a unix socket in a fresh 0700 directory,
//     removed when the plugin exits, reached only with a random token given over gRPC. Tries
//     run on it as on a gRPC lane. WEND_PLUGIN_FASTLANE=0 in the plugin's environment (its
//     Config.Env) turns the offer off.
//   - Nothing may be written to stdout before Serve: go-plugin reads its handshake from there.
//
// The SDK is a module of its own, github.com/wendflow/wend/sdk/go (imported as
// `sdk "github.com/wendflow/wend/sdk/go"`: the folder names the language, the package the SDK),
// released with wend at
// wend's version (tag sdk/go/vX.Y.Z): a plugin that requires it gets go-plugin, gRPC and
// protobuf, none of wend's own dependencies. Its sub-packages proto, wire and fastlane are the
// wire protocol, which wend's host shares; lanetest is test support.
package sdk
