package driver

import (
	"time"

	"github.com/wendflow/wend/spec"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"
)

// searchVersion is the change id under which the driver keeps the run's search fields as
// custom search attributes. A run whose history has no marker for it was started (or first
// run by a worker) before, set none, and replays setting none.
const searchVersion = "search-attributes"

// searchKept is what the driver last set on the execution's search attributes.
type searchKept struct {
	decided bool           // the version was asked
	on      bool           // the run keeps search attributes
	vals    map[string]any // field name to the value set
}

// keepSearch sets the execution's search attributes to the run's search field values
// (interpreter.Run.SearchValues, what the local engine indexes) when they changed since the
// last call: a field that lost its value (null, or its expression failed) is unset. Only the
// attributes the namespace had when the run started (wire.StartInput.SearchAttributes) with
// the field's type are set, so an unregistered attribute never fails the workflow task.
func (d *driver) keepSearch() {
	if len(d.w.SearchOrder) == 0 || len(d.in.SearchAttributes) == 0 {
		return
	}
	vals, _ := d.r.SearchValues()
	var ups []temporal.SearchAttributeUpdate
	for _, name := range d.w.SearchOrder {
		f := d.w.Search[name]
		if d.in.SearchAttributes[spec.TemporalSearchAttribute(name)] != spec.TemporalSearchType(f.Type) {
			continue
		}
		v, ok := vals[name]
		old, had := d.search.vals[name]
		if ok == had && old == v {
			continue
		}
		if up := searchUpdate(f, v, ok); up != nil {
			ups = append(ups, up)
		}
	}
	if len(ups) == 0 {
		return
	}
	if !d.search.decided {
		d.search.decided = true
		d.search.on = workflow.GetVersion(d.ctx, searchVersion, workflow.DefaultVersion, 1) == 1
	}
	if !d.search.on {
		return
	}
	if err := workflow.UpsertTypedSearchAttributes(d.ctx, ups...); err != nil {
		d.warn("wend: set the run's search attributes", "error", err)
		return
	}
	d.search.vals = vals
}

// searchUpdate is the typed update that sets field f's attribute to v, or unsets it when
// the field has no value (set false); nil for a value of a type the field cannot hold.
func searchUpdate(f *spec.SearchField, v any, set bool) temporal.SearchAttributeUpdate {
	name := spec.TemporalSearchAttribute(f.Name)
	switch f.Type {
	case spec.SearchString:
		k := temporal.NewSearchAttributeKeyKeyword(name)
		if s, ok := v.(string); ok && set {
			return k.ValueSet(s)
		}
		return k.ValueUnset()
	case spec.SearchNumber:
		k := temporal.NewSearchAttributeKeyFloat64(name)
		if n, ok := v.(float64); ok && set {
			return k.ValueSet(n)
		}
		return k.ValueUnset()
	case spec.SearchBool:
		k := temporal.NewSearchAttributeKeyBool(name)
		if b, ok := v.(bool); ok && set {
			return k.ValueSet(b)
		}
		return k.ValueUnset()
	case spec.SearchTime:
		k := temporal.NewSearchAttributeKeyTime(name)
		if s, ok := v.(string); ok && set {
			if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
				return k.ValueSet(t)
			}
		}
		return k.ValueUnset()
	}
	return nil
}
