package app

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/interpreter/engine"
	"github.com/wendflow/wend/server"
)

// OpenSteer opens the database at path for a command that signals or cancels runs while no
// process drives them: a Server over an engine that drives none of the runs it replays, and
// the close that stops both. A signal or cancel goes through an engine, the only writer of
// histories; parked holds every activity call until close, so their tasks stay in the store
// for whichever process drives the runs next.
// logf is told how an upgrade of the file's layout goes (OpenStore).
func OpenSteer(path string, logf func(string, ...any)) (*server.Server, func() error, error) {
	st, err := OpenStore(path, logf)
	if err != nil {
		return nil, nil, err
	}
	eng := engine.New(engine.Options{Store: st, Activities: parked{}, Parked: true})
	// Resume, not Recover: a signal or cancel needs its own run, rebuilt from its history when
	// it arrives, not a replay of every open run first. The start's repair runs behind it and
	// stops at close; the next process that drives the runs repairs them all at its start.
	if _, err := eng.Resume(context.Background()); err != nil {
		eng.Close()
		st.Close()
		return nil, nil, fmt.Errorf("replay unfinished runs: %w", err)
	}
	return server.New(eng, st), func() error {
		eng.Close()
		return st.Close()
	}, nil
}

// parked is the Activities of an engine that only takes signals and cancels.
type parked struct{}

func (parked) Execute(ctx context.Context, _ history.ActivityCall, _ func(history.Heartbeat)) (json.RawMessage, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}
