// Package schedule is the pure part of wend's schedules: when a schedule fires (cron in a time
// zone, or a fixed interval), how far a fire is jittered, and what a fire does while runs of
// the same schedule are open (the overlap policy). It has no clock, store or goroutines: every
// function takes the time it should consider "now", so tests drive it on a virtual clock and
// the durable runner (schedule/runner) replays the same decisions after a crash.
package schedule
