// Package secretforms writes a text in the encodings a program commonly gives a secret
// back in. Tests play a leaking plugin with it, and check that none of the forms reaches
// what wend keeps or shows; it is written apart from the host's masking on purpose.
package secretforms

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/url"
)

// Encodings names every encoding Encode knows.
var Encodings = []string{"raw", "json", "go-quoted", "go-quoted-ascii", "url-path", "url-path-segment", "url-query",
	"url-userinfo", "url-user", "base64-std", "base64-url", "base64-raw-std", "base64-raw-url",
	"basic-auth", "basic-auth-1", "basic-auth-2", "json-in-log"}

// Encode writes s as encoding names (one of Encodings), within the text around it that
// such an encoding usually comes with (a URL, a Basic header).
func Encode(s, encoding string) (string, error) {
	switch encoding {
	case "raw":
		return s, nil
	case "json":
		b, _ := json.Marshal(s)
		return string(b), nil
	case "go-quoted":
		return fmt.Sprintf("%q", s), nil
	case "go-quoted-ascii":
		return fmt.Sprintf("%+q", s), nil
	case "url-path":
		return (&url.URL{Scheme: "https", Host: "example.com", Path: "/v1/" + s}).String(), nil
	case "url-path-segment":
		return url.PathEscape(s), nil
	case "url-query":
		return "https://example.com/?key=" + url.QueryEscape(s), nil
	case "url-userinfo":
		return (&url.URL{Scheme: "https", User: url.UserPassword("admin", s), Host: "example.com"}).String(), nil
	case "url-user":
		return (&url.URL{Scheme: "https", User: url.User(s), Host: "example.com"}).String(), nil
	case "base64-std":
		return base64.StdEncoding.EncodeToString([]byte(s)), nil
	case "base64-url":
		return base64.URLEncoding.EncodeToString([]byte(s)), nil
	case "base64-raw-std":
		return base64.RawStdEncoding.EncodeToString([]byte(s)), nil
	case "base64-raw-url":
		return base64.RawURLEncoding.EncodeToString([]byte(s)), nil
	case "basic-auth": // the password inside user:password, at each of base64's alignments
		return "Basic " + base64.StdEncoding.EncodeToString([]byte("admin:"+s)), nil
	case "basic-auth-1":
		return "Basic " + base64.StdEncoding.EncodeToString([]byte("adm:"+s+"!")), nil
	case "basic-auth-2":
		return "Basic " + base64.StdEncoding.EncodeToString([]byte("ad:"+s+"!!")), nil
	case "json-in-log": // a JSON document holding the Go-quoted value, printed as JSON text
		b, _ := json.Marshal(map[string]string{"error": fmt.Sprintf("%q", s)})
		return string(b), nil
	}
	return "", fmt.Errorf("unknown encoding %s", encoding)
}
