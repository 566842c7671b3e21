package runview

import "fmt"

// Queue is what a queued run waits for: a place under its workflow's concurrency key
// (docs/language.md, Concurrency). A queued run has no history yet.
type Queue struct {
	Key      string `json:"key"`
	Limit    int    `json:"limit"`
	Running  int    `json:"running"`  // runs of the key holding a place now
	Position int    `json:"position"` // 1 for the run that starts next
}

func (q Queue) String() string {
	return fmt.Sprintf("queued: %d of %d running for key %s (position %d)", q.Running, q.Limit, q.Key, q.Position)
}
