package history_test

import (
	"testing"

	"github.com/wendflow/wend/history"
	"github.com/wendflow/wend/history/storetest"
)

func TestMemStore(t *testing.T) {
	storetest.Run(t, func(t *testing.T) history.Store { return history.NewMemStore() })
}
