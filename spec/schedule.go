package spec

import (
	"encoding/json"
	"fmt"
	"regexp"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/wendflow/wend/schedule"
)

// Schedule is one entry of a workflow's `schedules:` (docs/language.md): when `wend serve`
// starts a run of this workflow by itself.
type Schedule struct {
	ID            string
	Cron          string
	Every         Duration
	Timezone      string
	Jitter        Duration
	Input         json.RawMessage // nil: the run gets {} as any run without input
	Overlap       schedule.Overlap
	CatchupWindow Duration
	Paused        bool
	Timing        schedule.Timing // Cron or Every in Timezone, compiled
	Pos           Pos
}

// Def is the schedule as the runner uses it.
func (s *Schedule) Def() schedule.Def {
	return schedule.Def{ID: s.ID, Timing: s.Timing, Jitter: s.Jitter.D, Overlap: s.Overlap,
		CatchupWindow: s.CatchupWindow.D, Paused: s.Paused}
}

var scheduleKeys = []string{"id", "cron", "every", "timezone", "jitter", "input", "overlap", "catchup_window", "paused"}

// scheduleID names a schedule; its runs' workflow ids start with it.
var scheduleID = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}$`)

// minCatchup is Temporal's minimum catch-up window: the runner's tick must be able to see a fire
// before it counts as missed.
const minCatchup = 10 * time.Second

// schedules decodes and checks `schedules:`; the input of each is checked against the
// workflow's input schema later (checkScheduleInputs), once that schema is compiled.
func (d *decoder) schedules(w *Workflow, n *yaml.Node) {
	if n.Kind != yaml.SequenceNode {
		return // the JSON Schema says what it should be
	}
	seen := map[string]bool{}
	for i, item := range n.Content {
		path := fmt.Sprintf("schedules[%d]", i)
		if item.Kind != yaml.MappingNode {
			continue
		}
		s := &Schedule{Pos: posOf(item), Overlap: schedule.Skip}
		var idNode, cronNode, zoneNode, everyNode *yaml.Node
		d.fields(item, path, scheduleKeys, func(key string, _, v *yaml.Node) {
			p := joinKey(path, key)
			switch key {
			case "id":
				s.ID, idNode = str(v), v
			case "cron":
				s.Cron, cronNode = str(v), v
			case "every":
				s.Every, everyNode = d.duration(v, p), v
			case "timezone":
				s.Timezone, zoneNode = str(v), v
			case "jitter":
				s.Jitter = d.duration(v, p)
			case "catchup_window":
				s.CatchupWindow = d.duration(v, p)
				if s.CatchupWindow.IsSet() && s.CatchupWindow.D < minCatchup {
					d.errorf(v, p, "catchup_window %s is under the minimum of 10s", v.Value)
				}
			case "input":
				if jd, err := yamlToJSON(v); err == nil {
					s.Input, _ = json.Marshal(jd.value)
				}
			case "overlap":
				if o, err := schedule.ParseOverlap(str(v)); err == nil { // else the schema's enum says it
					s.Overlap = o
				}
			case "paused":
				s.Paused = boolean(v)
			}
		})
		switch {
		case idNode == nil:
			d.errorf(item, path, "a schedule needs an id (it names the schedule and starts its runs' workflow ids)")
		case !scheduleID.MatchString(s.ID):
			d.errorf(idNode, joinKey(path, "id"), "schedule id %q: use letters, digits, _, - and ., starting with a letter or digit, at most 100", s.ID)
		case seen[s.ID]:
			d.errorf(idNode, joinKey(path, "id"), "schedule id %q is used twice in this file", s.ID)
		}
		seen[s.ID] = true
		if s.Cron == "" && !s.Every.IsSet() && cronNode == nil {
			d.errorf(item, path, "a schedule needs cron (e.g. \"0 3 * * *\") or every (e.g. 15m)")
			continue
		}
		if cronNode != nil && s.Every.IsSet() {
			d.errorf(cronNode, joinKey(path, "cron"), "give cron or every, not both")
			continue
		}
		if zoneNode != nil {
			if _, err := schedule.LoadZone(s.Timezone); err != nil {
				d.errorf(zoneNode, joinKey(path, "timezone"), "%v", err)
				continue
			}
		}
		tm, err := schedule.NewTiming(s.Cron, s.Every.D, s.Timezone)
		if err != nil {
			at, p := item, path
			if cronNode != nil {
				at, p = cronNode, joinKey(path, "cron")
			} else if everyNode != nil {
				at, p = everyNode, joinKey(path, "every")
			}
			d.errorf(at, p, "%v", err)
			continue
		}
		s.Timing = tm
		w.Schedules = append(w.Schedules, s)
		d.scheduleInputs = append(d.scheduleInputs, scheduleInput{s: s, path: joinKey(path, "input"), n: scheduleInputNode(item)})
	}
}

type scheduleInput struct {
	s    *Schedule
	path string
	n    *yaml.Node
}

func scheduleInputNode(item *yaml.Node) *yaml.Node {
	for i := 0; i+1 < len(item.Content); i += 2 {
		if item.Content[i].Value == "input" {
			return item.Content[i+1]
		}
	}
	return nil
}

// checkScheduleInputs checks each schedule's input against the workflow's input schema, so a
// schedule that could never start a run fails validate, not a fire at 3 a.m.
func (d *decoder) checkScheduleInputs(w *Workflow) {
	if w.InputSchema == nil {
		return
	}
	for _, si := range d.scheduleInputs {
		var v any = map[string]any{}
		at := si.n
		if si.s.Input != nil {
			if err := json.Unmarshal(si.s.Input, &v); err != nil || v == nil {
				v = map[string]any{}
			}
		} else {
			at = nil
		}
		if err := ValidateInput(w.InputSchema, v); err != nil {
			path := si.path
			if at == nil {
				at, path = nil, path[:len(path)-len(".input")]
			}
			p := si.s.Pos
			if at != nil {
				p = posOf(at)
			}
			d.diags = append(d.diags, Diagnostic{File: d.file, Line: p.Line, Column: p.Col, Path: path,
				Message:  fmt.Sprintf("schedule %s: its input does not fit the workflow's input schema: %v", si.s.ID, err),
				Severity: SeverityError})
		}
	}
}
