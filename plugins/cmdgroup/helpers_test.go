//go:build unix

package cmdgroup

import (
	"encoding/json"
	"os/exec"
	"strconv"
	"strings"
)

func jsonOf(r *Record) ([]byte, error) { return json.Marshal(r) }

// listOne reports whether pid is a live process (not a zombie), as ps(1) shows it.
func listOne(pid int) (bool, error) {
	out, err := exec.Command("ps", "-o", "stat=", "-p", strconv.Itoa(pid)).Output()
	s := strings.TrimSpace(string(out))
	if err != nil && s == "" {
		return false, nil
	}
	return s != "" && s[0] != 'Z', nil
}
