package spec

import "testing"

// TestTemporalSearchFinding: --target temporal names each search field's attribute and the
// exact command that registers it, with the type that holds the field's values.
func TestTemporalSearchFinding(t *testing.T) {
	src := "wend: v1\nname: w\nsearch:\n" +
		"  customer: {type: string, value: \"${{ input.c }}\"}\n" +
		"  amount: {type: number, value: \"${{ state.t }}\"}\n" +
		"  vip: {type: bool, value: \"${{ input.v }}\"}\n" +
		"  paid_at: {type: time, value: \"${{ state.p }}\"}\n" +
		"steps:\n  - delay: 1s\n"
	w, ds := (&Loader{SkipChildren: true}).Load("w.wend.yaml", []byte(src))
	if ds.HasErrors() {
		t.Fatal(ds)
	}
	want := []string{
		"w.wend.yaml:4:3: search.customer: info: on Temporal the search field customer is kept in the custom search attribute wend_customer, which the namespace must have: register it once with 'temporal operator search-attribute create --name wend_customer --type Keyword' (add --namespace for another than default); runs started before it is registered keep no value",
		"w.wend.yaml:5:3: search.amount: info: on Temporal the search field amount is kept in the custom search attribute wend_amount, which the namespace must have: register it once with 'temporal operator search-attribute create --name wend_amount --type Double' (add --namespace for another than default); runs started before it is registered keep no value",
		"w.wend.yaml:6:3: search.vip: info: on Temporal the search field vip is kept in the custom search attribute wend_vip, which the namespace must have: register it once with 'temporal operator search-attribute create --name wend_vip --type Bool' (add --namespace for another than default); runs started before it is registered keep no value",
		"w.wend.yaml:7:3: search.paid_at: info: on Temporal the search field paid_at is kept in the custom search attribute wend_paid_at, which the namespace must have: register it once with 'temporal operator search-attribute create --name wend_paid_at --type Datetime' (add --namespace for another than default); runs started before it is registered keep no value",
	}
	got := CheckTarget(w, TargetTemporal)
	if len(got) != len(want) {
		t.Fatalf("findings %v, want %d", got, len(want))
	}
	for i, d := range got {
		if d.String() != want[i] {
			t.Errorf("finding %d:\n%s\nwant:\n%s", i, d.String(), want[i])
		}
	}
}

// TestTemporalSearchTypeCoversEveryType: every search field type has an attribute type.
func TestTemporalSearchTypeCoversEveryType(t *testing.T) {
	for _, typ := range SearchTypes {
		if TemporalSearchType(typ) == "" {
			t.Errorf("search type %s has no Temporal search attribute type", typ)
		}
	}
}
