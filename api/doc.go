// Package api holds the wire types of wend's control API, the JSON-over-HTTP API that
// docs/api.md documents: the bodies of its requests and answers, its error codes and error
// body, and the run and event shapes they carry (package history's Run and Event). It
// imports only the standard library and package history, so a program that talks to wend
// (package api/client) builds without the engine, the store or the workflow language.
//
// # What is wend's public API
//
// The packages with a compatibility promise are api (these wire types), api/client (the Go
// client), spec (the workflow language) and the plugin SDK (sdk/go, its own module). Every
// other package of the module serves wend's own binaries and tests and may change in any
// release without notice.
//
// The JSON names here are a contract: a change that is not purely additive is a new API.
package api
