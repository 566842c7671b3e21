package driver

import (
	"encoding/json"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/temporal/wire"
)

// Page sizes of wire.QueryEvents: MaxBytes 0 asks for DefaultPageBytes; more than MaxPageBytes
// is cut to it, so an answer stays within Temporal's payload limit.
var (
	DefaultPageBytes = 1 << 20
	MaxPageBytes     = MaxPayloadBytes
)

// query answers wire.QueryEvents: the events after q.After, at most q.MaxBytes of their JSON
// (always at least one, however large). A closed run answers too: a worker replays it.
func (d *driver) query(q wire.EventsQuery) (wire.EventsPage, error) {
	total := uint64(len(d.events))
	page := wire.EventsPage{Events: []history.Event{}, Total: total}
	limit := q.MaxBytes
	if limit <= 0 {
		limit = DefaultPageBytes
	}
	limit = min(limit, MaxPageBytes)
	size := 0
	for i := q.After; i < total; i++ {
		b, err := json.Marshal(d.events[i])
		if err != nil {
			return wire.EventsPage{}, err
		}
		if len(page.Events) > 0 && size+len(b) > limit {
			page.More = true
			break
		}
		size += len(b)
		page.Events = append(page.Events, d.events[i])
	}
	return page, nil
}
