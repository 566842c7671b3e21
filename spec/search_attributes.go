package spec

// On Temporal a search field is kept as a custom search attribute of the run's workflow
// execution (docs/design.md, Search on Temporal). The attribute is named after the field with
// a "wend_" prefix, so wend's attributes never collide with other applications' on a shared
// namespace, and its type follows the field's.

// TemporalSearchPrefix starts the name of every search attribute wend sets on Temporal.
const TemporalSearchPrefix = "wend_"

// TemporalSearchAttribute is the custom search attribute a search field is kept in on Temporal.
func TemporalSearchAttribute(field string) string { return TemporalSearchPrefix + field }

// TemporalSearchType is the Temporal search attribute type (as `temporal operator
// search-attribute create --type` names it) a search field of type t is kept as: a string is
// a Keyword (exact match, as wend list --where compares text), a number a Double.
func TemporalSearchType(t string) string {
	switch t {
	case SearchString:
		return "Keyword"
	case SearchNumber:
		return "Double"
	case SearchBool:
		return "Bool"
	case SearchTime:
		return "Datetime"
	}
	return ""
}

// TemporalSearchCreate is the command that registers field f's attribute (on the default
// namespace; --namespace names another).
func TemporalSearchCreate(f *SearchField) string {
	return "temporal operator search-attribute create --name " + TemporalSearchAttribute(f.Name) +
		" --type " + TemporalSearchType(f.Type)
}
