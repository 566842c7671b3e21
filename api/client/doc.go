// Package client is the Go client of wend's control API, the JSON-over-HTTP API that
// docs/api.md documents and package server serves: on the unix socket beside a database
// (PATH.sock) of the wend process holding it, and on `wend serve --http`. Its requests and
// answers are package api's types; it imports nothing of wend besides api and history, so a
// program that drives wend builds without the engine, the store or the workflow language.
//
// Its run methods are server.Server's, with the same signatures (Export gives the export's
// JSON as sent, for history/export's Document to read), so a caller holding a *server.Server
// in process and one holding a *Client over a socket use the same code (internal/commands's
// backend). An error the server answered comes back as *api.Error, with its code and
// message, so errors.Is still finds the engine's and the store's sentinels on this side of
// the socket; an error of the connection names the server (Client.Peer) and the socket.
//
// The CLI talks to the process holding a database through it; the benchmarks and the
// Temporal yardstick drive a real `wend serve` with it (RunToEnd, Ready).
package client
