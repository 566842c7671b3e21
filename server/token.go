package server

import (
	"fmt"
	"strings"
)

// A token guards every mutation, and on a non-loopback listener every request: it must be
// too long to guess, at least 128 bits. wend cannot see how a token was made, so it counts
// what its characters can carry: 4 bits a hex digit, at most 6 bits any other character
// (base64's alphabet); hence 32 hex digits or 22 other characters. A token with fewer than 8
// distinct characters ("aaaa...") is refused too, whatever its length.
const (
	minTokenHex      = 32 // 32 × 4 bits
	minTokenChars    = 22 // 22 × 6 bits = 132
	minTokenDistinct = 8
)

// CheckToken refuses an API token that cannot carry 128 bits, saying how to make one.
func CheckToken(token string) error {
	const how = "make one with: openssl rand -hex 16 (or head -c 16 /dev/urandom | base64)"
	hexOnly, distinct := true, map[rune]bool{}
	for _, r := range token {
		if r <= ' ' || r == 0x7f {
			return fmt.Errorf("the token has a space or control character; %s", how)
		}
		if !strings.ContainsRune("0123456789abcdefABCDEF", r) {
			hexOnly = false
		}
		distinct[r] = true
	}
	switch n := len([]rune(token)); {
	case hexOnly && n < minTokenHex:
		return fmt.Errorf("the token is %d hex digits; a token needs at least 128 bits: %d hex digits or %d other characters; %s",
			n, minTokenHex, minTokenChars, how)
	case n < minTokenChars:
		return fmt.Errorf("the token is %d characters; a token needs at least 128 bits: %d characters (%d if hex digits only); %s",
			n, minTokenChars, minTokenHex, how)
	case len(distinct) < minTokenDistinct:
		return fmt.Errorf("the token has only %d distinct characters; a token needs at least 128 bits of randomness; %s", len(distinct), how)
	}
	return nil
}
