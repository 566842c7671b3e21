package main

import (
	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/temporal/driver"
	"github.com/wendflow/wend/tracing"
)

// workflowOptions traces the workflow's runs (run and step spans; the activities export the
// try spans) when the worker exports traces.
func workflowOptions(traces *tracing.Provider) driver.Options {
	if traces == nil {
		return driver.Options{}
	}
	return driver.Options{Spans: func(run history.Run, started history.Event) driver.Spans {
		return traces.RunSpans(run, started)
	}}
}
