// Package testsuite runs workflow tests: `*.wend.test.yaml` files whose cases feed a workflow
// mocked activity results, signals and cancellations at virtual times, and check what it did.
//
// It drives the production interpreter (interpreter.Run) with no store, no plugin and no wall
// clock: the driver plays the engine's part — it answers ActivityScheduled with the case's
// mocks, fires timers in virtual time order, starts retries at their available_at and closes
// children — so a workflow that waits 72 h and then 30 days is tested in milliseconds, and a
// test exercises the same decisions a real run makes.
package testsuite
