package tracing

import (
	"sync"

	"go.opentelemetry.io/otel/attribute"
)

// A span's attributes are most of what building it allocates (a KeyValue is 64 bytes, a try
// has eleven or more). Spans handed to wend's own batch processor (spanBatcher) are written
// into blocks that it hands back once its exporters have exported them, so in a steady
// stream of steps they are reused, not allocated.

// blockLen holds the most attributes a span of wend's has (fifteen: a failed try whose step
// has an id, with a plugin build).
const blockLen = 16

type attrBlock [blockLen]attribute.KeyValue

// attrBlocks is the blocks handed back, for spans to come. A nil one hands out fresh slices.
type attrBlocks struct{ pool sync.Pool }

// get is an empty slice with room for n attributes.
func (b *attrBlocks) get(n int) []attribute.KeyValue {
	if b == nil || n > blockLen {
		return make([]attribute.KeyValue, 0, n)
	}
	if blk, _ := b.pool.Get().(*attrBlock); blk != nil {
		return blk[:0]
	}
	return new(attrBlock)[:0]
}

// put keeps the block behind attrs, one that get handed out, once nothing reads it.
func (b *attrBlocks) put(attrs []attribute.KeyValue) {
	if cap(attrs) != blockLen {
		return
	}
	// Not cleared: the next span overwrites what it uses, and until then a kept block holds
	// only the strings of a span exported a moment ago.
	b.pool.Put((*attrBlock)(attrs[:blockLen]))
}
