// Package server is wend's control API: JSON over HTTP, served by the process that holds the
// database (wend run, wend serve, wend resume) on a unix socket beside the database file, so
// other wend commands can list, show, start, signal and cancel runs while that process drives
// them.
//
// Every route is a thin layer over a Go method of Server (List, Show, Events, Start, Signal,
// Cancel, Wait, Check). The CLI calls those methods directly when it holds the database and
// over HTTP when another process does, so both paths give the same results and the same
// error texts by construction.
//
// Routes are JSON (errors are {"error": {"code": "...", "message": "..."}}); docs/api.md
// gives every route with its parameters, bodies and statuses. The run routes are registered
// in routes (http.go), each handler in a file named for what it does; schedules
// (schedules.go), plugin rolls (plugins.go) and /metrics (tcp.go, TCP only) register
// themselves beside them.
//
// Statuses: 400 bad input, 401 no token where one is needed, 403 a cross-site form, 404
// unknown workflow or route, 409 the run has finished, is blocked or cannot be retried, 501
// not supported by this store, 503 the engine stopped, 500 anything else.
//
// The package never imports the store implementation (bbolt) or internal/: it sees a
// history.Store and an *engine.Engine. Its leaves, wired by the CLI, import it and never the
// reverse: server/web (the web UI, a UI the listeners serve beside the API) and server/metrics
// (the /metrics handler for TCPOptions.Metrics). A new route is a line in a register function
// and its handler in a file of its own.
package server
