package runview

import "github.com/wendflow/wend/api"

// Queue says what a queued run waits for (api.Queue).
type Queue = api.Queue
