// Package batch runs wend serve's batches (POST /v1/batches; docs/api.md, Batches): one
// operation (cancel, terminate, signal, retry, purge or migrate) over a set of runs fixed when
// accepted, acted on one at a time at a paced rate through the server's methods, the progress
// kept in a Store (boltstore) so a restart resumes it. Invariant: a run is acted on at most
// once per batch; the runs a crash may have left acted on but not marked (those between the
// record's next and claimed) are looked for in their history before any act (act.go). Over a
// Temporal cluster that runs batches itself (server.ClusterBatches), the runner fixes the runs
// and hands them over (cluster.go).
//
// The server answers the HTTP routes (server/batch_http.go) over a server.BatchRunner, which
// Runner is; the wire types (api.Batch, api.BatchRequest) are the API's.
package batch
