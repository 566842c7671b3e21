// Package server is wend's control API: JSON over HTTP, served by the process that holds the
// database (wend run, wend serve, wend resume) on a unix socket beside the database file, so
// other wend commands can list, show, start, signal and cancel runs while that process drives
// them.
//
// Every route is a thin layer over a Go method of Server (List, Show, Events, Start, Signal,
// Cancel, Terminate, Retry, Wait, Query, Export, Repair, Purge, Check, WriteBackup,
// Schedules, RollPlugins). The CLI calls those methods directly when it holds the database and
// over HTTP when another process does, so both paths give the same results and the same
// error texts by construction.
//
// Routes are JSON (errors are {"error": {"code": "...", "message": "..."}}); docs/api.md
// gives every route with its parameters, bodies and statuses. The run routes are registered
// in routes (http.go), each with the access it needs over TCP (access.go: open, read or
// act; auth.go's guard enforces it), each handler in a file named for what it does; schedules
// (schedules.go), plugin rolls (plugins.go), batches (batch_http.go) and /metrics (tcp.go, TCP
// only) register themselves beside them.
//
// Batches act on many runs for wend serve through the methods above: package batch runs them,
// and batch_http.go answers /v1/batches over its BatchRunner (batch_runner.go).
//
// The edge is where requests enter and are checked, before any run is read or anything is
// recorded: ids, payload sizes, JSON, query expressions, a workflow's validity, registered
// names. Those checks stay in Server even when a Cluster (cluster.go: a Temporal cluster,
// for wend serve --temporal) holds the runs, so both answer bad input alike. List filters
// (wend list --where, where=) are read by ParseWhere (where.go), whose grammar covers the
// fixed keys and the workflows' search fields; a start's W3C traceparent header becomes the
// run's trace context (traceparent.go).
//
// Statuses: 400 bad input, 401 no token where one is needed, 403 a cross-site form, 404
// unknown workflow or route, 409 the run has finished, is blocked or cannot be retried, 501
// not supported by this store, 503 the engine stopped, 500 anything else.
//
// Backend (backend.go) is what wend's commands that read or steer runs use: a Server over
// the database the command opened, a client of the control socket of the process that holds
// it, or another engine's implementation (wend-temporal's Temporal backend), all answering with
// the same methods and *Error codes.
//
// The package never imports the store implementation (bbolt) or internal/: it sees a
// history.Store and an *engine.Engine. Its leaves, wired by the CLI, import it and never the
// reverse: server/web (the web UI, a UI the listeners serve beside the API) and server/metrics
// (the /metrics handler for TCPOptions.Metrics). A new route is a line in a register function
// and its handler in a file of its own.
package server
