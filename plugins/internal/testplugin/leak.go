package main

import (
	"fmt"
	"os"

	sdk "github.com/wendflow/wend/sdk/go"
	"github.com/wendflow/wend/testkit/secretforms"
)

// leakIn asks the leak activity to send Secret back, encoded as Encoding, through Channel.
type leakIn struct {
	Secret   string `json:"secret"`
	Encoding string `json:"encoding"`
	Channel  string `json:"channel"`
}

// leak plays a plugin that gives away a secret it was given: in one of the encodings a
// program commonly writes text in, through one of the ways back to the host.
func leak(ctx *sdk.Context, in leakIn) (any, error) {
	said, err := secretforms.Encode(in.Secret, in.Encoding)
	if err != nil {
		return nil, sdk.NonRetryable("BadInput", err.Error())
	}
	text := "before " + said + " after"
	switch in.Channel {
	case "output":
		return map[string]string{"said": text}, nil
	case "error":
		return nil, sdk.NonRetryable("Leak", text).WithDetails(map[string]string{"said": text})
	case "heartbeat":
		return nil, ctx.Heartbeat(map[string]string{"said": text})
	case "stderr":
		fmt.Fprintln(os.Stderr, text)
		return nil, nil
	}
	return nil, sdk.NonRetryable("BadInput", "unknown channel "+in.Channel)
}
