package plugins

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/wendflow/wend/history"
)

// A call's secrets go through three steps, each in its own file: this one reads the values
// the call's places name (secrets.go), secret_places.go puts them at those places and
// nowhere else, and mask.go hides every common encoding of them in what comes back.

// TypeSecretMissing fails a try whose input needs a secret the host cannot read.
const TypeSecretMissing = "SecretMissing"

// resolveSecrets reads the value of each secret call.SecretPlaces names, from the host's
// environment or a file, just before the call: the values exist nowhere else. A secret the
// call only declares is not read.
func resolveSecrets(call history.ActivityCall) (map[string]string, error) {
	var vals map[string]string
	for _, pl := range call.SecretPlaces {
		if _, ok := vals[pl.Name]; ok {
			continue
		}
		v, err := readDeclared(call.Secrets, pl.Name)
		if err != nil {
			return nil, &history.ActivityError{Category: history.CategoryActivity, Type: TypeSecretMissing, NonRetryable: true,
				Message: fmt.Sprintf("plugin %s: activity %s: secret %s: %v", call.Plugin, call.Activity, pl.Name, err)}
		}
		if vals == nil {
			vals = map[string]string{}
		}
		vals[pl.Name] = v
	}
	return vals, nil
}

func readDeclared(refs []history.SecretRef, name string) (string, error) {
	for _, ref := range refs {
		if ref.Name == name {
			return readSecret(ref)
		}
	}
	return "", errors.New("not declared under the workflow's secrets")
}

func readSecret(ref history.SecretRef) (string, error) {
	if ref.Env != "" {
		v, ok := os.LookupEnv(ref.Env)
		if !ok || v == "" {
			return "", fmt.Errorf("environment variable %s is not set (set it where wend runs)", ref.Env)
		}
		return v, nil
	}
	b, err := os.ReadFile(ref.File)
	if err != nil {
		return "", fmt.Errorf("read %s: %w", ref.File, errWithoutContent(err))
	}
	v := strings.TrimRight(string(b), "\r\n")
	if v == "" {
		return "", fmt.Errorf("%s is empty", ref.File)
	}
	return v, nil
}

// errWithoutContent keeps an error's kind (not found, permission) without more.
func errWithoutContent(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
