package backend

import (
	"context"
	"strings"

	"github.com/wendflow/wend/spec"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/operatorservice/v1"
)

// searchTypeNames names Temporal's search attribute types as spec.TemporalSearchType does.
var searchTypeNames = map[enumspb.IndexedValueType]string{
	enumspb.INDEXED_VALUE_TYPE_KEYWORD:      "Keyword",
	enumspb.INDEXED_VALUE_TYPE_DOUBLE:       "Double",
	enumspb.INDEXED_VALUE_TYPE_BOOL:         "Bool",
	enumspb.INDEXED_VALUE_TYPE_DATETIME:     "Datetime",
	enumspb.INDEXED_VALUE_TYPE_TEXT:         "Text",
	enumspb.INDEXED_VALUE_TYPE_INT:          "Int",
	enumspb.INDEXED_VALUE_TYPE_KEYWORD_LIST: "KeywordList",
}

// searchAttributes lists the wend custom search attributes (spec.TemporalSearchPrefix) the
// namespace has, name to type, for wire.StartInput.SearchAttributes: the driver sets only
// these. It asks only when the run may have search fields (the workflow declares some, or it
// bundles children that may). A cluster that does not answer gives none: the run then keeps
// no attributes, which is better than a start that fails or a run whose tasks fail.
func (b *Backend) searchAttributes(ctx context.Context, w *spec.Workflow, specs map[string]string) map[string]string {
	if len(w.SearchOrder) == 0 && len(specs) == 0 {
		return nil
	}
	resp, err := b.c.OperatorService().ListSearchAttributes(ctx, &operatorservice.ListSearchAttributesRequest{Namespace: b.ns})
	if err != nil {
		return nil
	}
	var out map[string]string
	for name, typ := range resp.GetCustomAttributes() {
		if !strings.HasPrefix(name, spec.TemporalSearchPrefix) {
			continue
		}
		if out == nil {
			out = map[string]string{}
		}
		out[name] = searchTypeNames[typ]
	}
	return out
}
