// Package history owns wend's durable event model: event types, the payloads of activity calls,
// results and failures, the Store interface, an in-memory Store (MemStore: tests, and the
// empty answer for a database file that does not exist), and its integrity checks.
//
// It imports only the standard library, so the interpreter, the engine, the plugin host and the
// stores can all share its types without pulling in each other's dependencies.
package history
