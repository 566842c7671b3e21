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
// Routes (all JSON; errors are {"error": {"code": "...", "message": "..."}}; docs/api.md
// gives every parameter, body and status):
//
//	GET  /v1/health                    {"status": "ok", "pid": N, "engine": bool}
//	GET  /v1/runs?status=&workflow_id=&name=&q=&started_after=&started_before=&limit=&cursor=
//	                                   {"runs": [Run...], "next_cursor": "..."}, newest first (list.go)
//	POST /v1/runs                      engine.StartRequest -> {"run": Run, "started": bool}; 201 when new
//	GET  /v1/runs/{id}                 RunDetail of a workflow id's newest run, or of a run id
//	GET  /v1/runs/{id}/events?after=N  {"run": Run, "events": [...]} with seq > N
//	GET  /v1/runs/{id}/wait?timeout=D  Outcome once the workflow closed, or closed=false at D
//	GET  /v1/runs/{id}/export          the history export (wend.history-export/v1)
//	POST /v1/runs/{id}/signals         {"name": "...", "data": JSON, "id": "..."} -> {"run": Run}
//	POST /v1/runs/{id}/cancel          history.CancelRequest {"reason": "..."} -> {"run": Run}
//	POST /v1/runs/{id}/terminate       history.CancelRequest {"reason": "..."} -> {"run": Run}
//	POST /v1/runs/{id}/retry           -> Retried; 201
//	POST /v1/runs/{id}/repair          -> RepairReport
//	POST /v1/repair                    -> RepairReport of every open run
//	GET  /v1/check                     CheckReport (when the store can check itself)
//	GET  /v1/backup                    a consistent copy of the database file (backup.go)
//
// Statuses: 400 bad input, 401 no token where one is needed, 403 a cross-site form, 404
// unknown workflow or route, 409 the run has finished, is blocked or cannot be retried, 501
// not supported by this store, 503 the engine stopped, 500 anything else.
//
// The package never imports the store implementation (bbolt) or internal/: it sees a
// history.Store and an *engine.Engine. Its leaves, wired by the CLI, import it and never the
// reverse: server/web (the web UI, a UI the listeners serve beside the API) and server/metrics
// (the /metrics handler for TCPOptions.Metrics). A new route is one line in routes (http.go)
// and its handler in a file of its own.
package server
