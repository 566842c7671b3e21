// Package testsuite runs workflow tests: `*.wend.test.yaml` files whose cases feed a workflow
// mocked activity results, signals and cancellations at virtual times, and check what it did.
//
// A case runs the production interpreter on its in-memory host (interpreter/sim), with no store,
// no plugin and no wall clock. The host keeps what the run is owed in virtual time; this
// package is the world around it: it answers each try with the case's mocks, queues the case's
// signals, cancels and terminations, and closes children (mocked, or run from their files with
// the same mocks). So a workflow that waits 72 h and then 30 days is tested in milliseconds, and
// a case exercises the same decisions a real run makes. Mocks, expectations, coverage and the
// reports (text and JUnit) are this package's.
package testsuite
