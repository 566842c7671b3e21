package boltstore

import "sync"

// changeFeedMax bounds the changes the feed remembers: a reader further behind reads again
// whatever it derives from the runs.
const changeFeedMax = 1 << 16

// changeFeed numbers the runs that commits and purges touched, in the order they were
// answered (the n-th change is at position n), so a reader that keeps something derived from
// the runs (the metrics' summaries) re-reads only the runs changed since it last looked,
// instead of every run. It lives in memory: a reader in a new process starts with a whole read.
type changeFeed struct {
	mu      sync.Mutex
	dropped uint64   // changes forgotten: ids[0] is at position dropped+1
	ids     []string // the runs changed, in order
}

// add records that the runs ids changed; the caller has made the change readable.
func (f *changeFeed) add(ids ...string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.ids = append(f.ids, ids...)
	if over := len(f.ids) - changeFeedMax; over > 0 {
		drop := max(over, changeFeedMax/2) // amortised: drop half at a time
		f.ids = append(f.ids[:0], f.ids[drop:]...)
		f.dropped += uint64(drop)
	}
}

// ChangedRuns returns the ids of the runs changed (committed or purged) after position since,
// each once, and the position now reached. complete is false when changes after since have
// been forgotten: the caller must then read every run again. A reader with nothing yet takes
// now from a first call, then reads every run, then asks from now on.
func (s *Store) ChangedRuns(since uint64) (ids []string, now uint64, complete bool) {
	f := &s.changes
	f.mu.Lock()
	defer f.mu.Unlock()
	now = f.dropped + uint64(len(f.ids))
	if since < f.dropped {
		return nil, now, false
	}
	seen := map[string]bool{}
	for _, id := range f.ids[min(since-f.dropped, uint64(len(f.ids))):] {
		if !seen[id] {
			seen[id] = true
			ids = append(ids, id)
		}
	}
	return ids, now, true
}
