// Package harness starts and drives a real `wend serve` process for measurements: the
// benchmarks (go run ./bench) and the Temporal yardstick (temporal/e2e/cmd/yardstick) time
// wend through it, over its control socket (api/client). It is measurement tooling, not
// product: no package wend ships imports it, and it is public only because the yardstick
// lives in the temporal/e2e module, which cannot import the main module's internal/ packages.
//
// A process it starts gets SIGTERM when the measuring process dies (on Linux), so a killed
// benchmark stops its `wend serve`, which stops its plugins; NoLeftovers then checks that
// none of the programs a measurement built still runs.
package harness
