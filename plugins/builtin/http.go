package builtin

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	sdk "github.com/wendflow/wend/sdk/go"
)

// Response limits of web.request: a larger body fails the try (ResponseTooLarge) rather than
// reaching the history cut.
const (
	defaultResponseBytes = 1 << 20
	maxResponseBytes     = 1536 << 10 // with headers and JSON escaping, under sdk.MaxPayloadBytes
	errorBodyBytes       = 4 << 10    // of a failed response's body, kept in the failure's details
)

type httpInput struct {
	Method           string            `json:"method"`
	URL              string            `json:"url"`
	Query            map[string]any    `json:"query"`
	Headers          map[string]string `json:"headers"`
	JSON             json.RawMessage   `json:"json"`
	Body             *string           `json:"body"`
	Timeout          string            `json:"timeout"`
	Expect           []any             `json:"expect"`
	RetryStatuses    []int             `json:"retry_statuses"`
	CAFile           string            `json:"ca_file"`
	CAPEM            string            `json:"ca_pem"`
	MaxResponseBytes int               `json:"max_response_bytes"`
}

type httpOutput struct {
	Status  int               `json:"status"`
	Headers map[string]string `json:"headers"`
	JSON    json.RawMessage   `json:"json,omitempty"`
	Body    *string           `json:"body,omitempty"`
}

const httpInputSchema = `{
  "type": "object",
  "additionalProperties": false,
  "required": ["url"],
  "properties": {
    "method": {"description": "GET (default), POST, PUT, PATCH, DELETE, HEAD or OPTIONS.", "enum": ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"]},
    "url": {"description": "An http or https URL.", "type": "string", "pattern": "^[hH][tT][tT][pP][sS]?://"},
    "query": {"description": "Query parameters added to the URL's: a string (or number, boolean) or a list of them each.", "type": "object", "additionalProperties": {"type": ["string", "number", "boolean", "array"]}},
    "headers": {"description": "Request headers.", "type": "object", "additionalProperties": {"type": "string"}},
    "json": {"description": "A JSON request body (Content-Type: application/json unless headers set one); not with body."},
    "body": {"description": "A text request body; not with json.", "type": "string"},
    "timeout": {"description": "Bound of the whole request, e.g. 10s (default 5m); the try's own timeout bounds it too.", "type": "string"},
    "expect": {"description": "Statuses that count as success: numbers or classes like \"2xx\" (default [\"2xx\"]).", "type": "array", "minItems": 1, "items": {"type": ["integer", "string"], "pattern": "^[1-5]xx$"}},
    "retry_statuses": {"description": "Statuses outside expect whose failure a retry may fix (default: 429 and 5xx); any other fails for good.", "type": "array", "items": {"type": "integer", "minimum": 100, "maximum": 599}},
    "ca_file": {"description": "PEM file of the certificate authorities to trust instead of the system's.", "type": "string"},
    "ca_pem": {"description": "PEM text of the certificate authorities to trust instead of the system's.", "type": "string"},
    "max_response_bytes": {"description": "Largest response body read (default 1048576, at most 1572864); a larger one fails the try.", "type": "integer", "minimum": 1, "maximum": 1572864}
  }
}`

const httpOutputSchema = `{
  "type": "object",
  "required": ["status", "headers"],
  "properties": {
    "status": {"type": "integer"},
    "headers": {"type": "object", "additionalProperties": {"type": "string"}},
    "json": {"description": "The body, when the response is JSON."},
    "body": {"description": "The body as text, when the response is not JSON.", "type": "string"}
  }
}`

func httpActivities() sdk.Activities {
	return sdk.Activities{
		"request": sdk.Func(request, httpInputSchema, httpOutputSchema).Describe(
			"Make an HTTP request; a status outside expect fails the try with type HTTP<status> (429 and 5xx retryable)."),
	}
}

// defaultTransport serves requests that trust the system's roots; one per process so
// connections are reused across tries.
var defaultTransport = newTransport(nil)

func newTransport(roots *x509.CertPool) *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.Proxy = http.ProxyFromEnvironment
	if roots != nil {
		t.TLSClientConfig = &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}
	}
	return t
}

func request(ctx *sdk.Context, in httpInput) (*httpOutput, error) {
	rctx, cancel := context.WithCancelCause(ctx.Context)
	defer cancel(nil)
	req, client, limit, err := in.build(rctx)
	if err != nil {
		return nil, err
	}
	rd := &redirects{headers: in.Headers}
	client.CheckRedirect = rd.check
	resp, err := client.Do(req)
	if err != nil {
		return nil, transportError(ctx.Context, req, err)
	}
	defer resp.Body.Close()
	if err := rd.refusal(req); err != nil {
		return nil, err
	}
	idle := newIdleBody(resp.Body, idleTimeout, cancel)
	defer idle.stop()
	body, err := io.ReadAll(io.LimitReader(idle, int64(limit)+1))
	if err != nil {
		if errors.Is(context.Cause(rctx), errIdle) && ctx.Err() == nil {
			return nil, sdk.NewError(sdk.TypeTimeout, fmt.Sprintf("%s %s: no byte of the response body came for %s", req.Method, redact(req.URL), idleTimeout))
		}
		return nil, transportError(ctx.Context, req, err)
	}
	out := &httpOutput{Status: resp.StatusCode, Headers: flatHeaders(resp.Header)}
	if !in.expected(resp.StatusCode) {
		return nil, statusError(in, req, resp, out, body)
	}
	if len(body) > limit {
		return nil, sdk.NonRetryable("ResponseTooLarge", fmt.Sprintf("%s %s: the response body is over the %d-byte limit (max_response_bytes)", req.Method, redact(req.URL), limit))
	}
	setBody(out, resp.Header.Get("Content-Type"), body)
	return out, nil
}

// build checks in and makes its request, the client to send it with and the body limit.
func (in httpInput) build(ctx context.Context) (*http.Request, *http.Client, int, error) {
	u, err := url.Parse(in.URL)
	if err != nil {
		return nil, nil, 0, badInput("url: not a URL (%s)", parseProblem(err))
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, nil, 0, badInput("url: want an http or https URL, got %q", redact(u))
	}
	if err := addQuery(u, in.Query); err != nil {
		return nil, nil, 0, err
	}
	limit := defaultResponseBytes
	switch {
	case in.MaxResponseBytes < 0 || in.MaxResponseBytes > maxResponseBytes:
		return nil, nil, 0, badInput("max_response_bytes: must be 1 to %d, got %d", maxResponseBytes, in.MaxResponseBytes)
	case in.MaxResponseBytes > 0:
		limit = in.MaxResponseBytes
	}
	if err := in.checkStatuses(); err != nil {
		return nil, nil, 0, err
	}
	client := &http.Client{Transport: defaultTransport, Timeout: defaultTimeout}
	if in.Timeout != "" {
		d, err := time.ParseDuration(in.Timeout)
		if err != nil || d <= 0 {
			return nil, nil, 0, badInput("timeout: want a positive duration like 10s, got %q", in.Timeout)
		}
		client.Timeout = d
	}
	if in.CAFile != "" || in.CAPEM != "" {
		roots, err := in.roots()
		if err != nil {
			return nil, nil, 0, err
		}
		client.Transport = newTransport(roots)
	}
	body, contentType, err := in.body()
	if err != nil {
		return nil, nil, 0, err
	}
	method := cmpOr(in.Method, http.MethodGet)
	req, err := http.NewRequestWithContext(ctx, method, u.String(), body)
	if err != nil {
		return nil, nil, 0, badInput("method: %v", err)
	}
	for k, v := range in.Headers {
		req.Header.Set(k, v)
	}
	if contentType != "" && req.Header.Get("Content-Type") == "" {
		req.Header.Set("Content-Type", contentType)
	}
	return req, client, limit, nil
}

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return strings.ToUpper(s)
}

func addQuery(u *url.URL, query map[string]any) error {
	if len(query) == 0 {
		return nil
	}
	q := u.Query()
	for k, v := range query {
		vals, ok := v.([]any)
		if !ok {
			vals = []any{v}
		}
		for _, item := range vals {
			switch item.(type) {
			case string, float64, bool:
				q.Add(k, fmt.Sprint(item))
			default:
				return badInput("query.%s: want a string, number or boolean, or a list of them", k)
			}
		}
	}
	u.RawQuery = q.Encode()
	return nil
}

func (in httpInput) body() (io.Reader, string, error) {
	switch {
	case len(in.JSON) > 0 && in.Body != nil:
		return nil, "", badInput("json and body: give one request body, not both")
	case len(in.JSON) > 0:
		return bytes.NewReader(in.JSON), "application/json", nil
	case in.Body != nil:
		return strings.NewReader(*in.Body), "", nil
	}
	return nil, "", nil
}

func (in httpInput) roots() (*x509.CertPool, error) {
	pem := []byte(in.CAPEM)
	if in.CAFile != "" {
		b, err := os.ReadFile(in.CAFile)
		if err != nil {
			return nil, badInput("ca_file: %v", err)
		}
		pem = append(pem, b...)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, badInput("ca_file/ca_pem: no PEM certificate found")
	}
	return pool, nil
}

func (in httpInput) checkStatuses() error {
	for _, e := range in.Expect {
		switch v := e.(type) {
		case float64:
			if v != float64(int(v)) || v < 100 || v > 599 {
				return badInput("expect: %v is not a status (100 to 599)", v)
			}
		case string:
			if len(v) != 3 || v[0] < '1' || v[0] > '5' || strings.ToLower(v[1:]) != "xx" {
				return badInput("expect: %q is not a status class like \"2xx\"", v)
			}
		default:
			return badInput("expect: want statuses like 200 or classes like \"2xx\"")
		}
	}
	return nil
}

// expected reports whether status counts as success.
func (in httpInput) expected(status int) bool {
	if len(in.Expect) == 0 {
		return status >= 200 && status < 300
	}
	for _, e := range in.Expect {
		switch v := e.(type) {
		case float64:
			if int(v) == status {
				return true
			}
		case string:
			if int(v[0]-'0') == status/100 {
				return true
			}
		}
	}
	return false
}

// retryable reports whether a failure with status may succeed on a retry.
func (in httpInput) retryable(status int) bool {
	if in.RetryStatuses != nil {
		return slices.Contains(in.RetryStatuses, status)
	}
	return status == http.StatusTooManyRequests || status >= 500
}

// statusError is the failure of a response whose status is not expected: type HTTP<status>,
// details the status, headers, the start of the body and the wait Retry-After asks for.
func statusError(in httpInput, req *http.Request, resp *http.Response, out *httpOutput, body []byte) *sdk.Error {
	details := map[string]any{"status": out.Status, "headers": out.Headers,
		"body": strings.ToValidUTF8(string(body[:min(len(body), errorBodyBytes)]), "\uFFFD")}
	msg := fmt.Sprintf("%s %s: status %d", req.Method, redact(req.URL), out.Status)
	e := &sdk.Error{Type: "HTTP" + strconv.Itoa(out.Status), NonRetryable: !in.retryable(out.Status)}
	if wait, ok := retryAfter(resp.Header.Get("Retry-After"), time.Now()); ok {
		details["retry_after_seconds"] = wait.Seconds()
		msg += fmt.Sprintf(" (Retry-After %s)", wait)
		e.NextRetryDelay = wait // the next try waits for it instead of the step's backoff
	}
	e.Message = msg
	return e.WithDetails(details)
}

// maxRetryAfterSeconds caps a Retry-After in seconds (a week), so no value overflows.
const maxRetryAfterSeconds = 7 * 24 * 3600

// retryAfter parses a Retry-After value: seconds or an HTTP date.
func retryAfter(v string, now time.Time) (time.Duration, bool) {
	if v == "" {
		return 0, false
	}
	if s, err := strconv.Atoi(strings.TrimSpace(v)); err == nil && s >= 0 {
		return time.Duration(min(s, maxRetryAfterSeconds)) * time.Second, true
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(t.Sub(now).Round(time.Second), 0), true
	}
	return 0, false
}

// transportError is the failure of a request that got no response.
func transportError(ctx context.Context, req *http.Request, err error) error {
	if ctx.Err() != nil {
		return ctx.Err() // the host's cancel or the try's deadline: the SDK reports it
	}
	where := req.Method + " " + redact(req.URL)
	var certErr *tls.CertificateVerificationError
	var unknownAuth x509.UnknownAuthorityError
	var hostErr x509.HostnameError
	var netErr net.Error
	switch {
	case errors.As(err, &certErr) || errors.As(err, &unknownAuth) || errors.As(err, &hostErr):
		return sdk.NonRetryable("TLSError", fmt.Sprintf("%s: %v", where, unwrapURL(err)))
	case errors.As(err, &netErr) && netErr.Timeout():
		return sdk.NewError(sdk.TypeTimeout, fmt.Sprintf("%s: %v", where, unwrapURL(err)))
	}
	return sdk.NewError("ConnectionError", fmt.Sprintf("%s: %v", where, unwrapURL(err)))
}

// unwrapURL drops url.Error's "Get "URL": " prefix, which would repeat the URL unredacted.
func unwrapURL(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// redact is u for messages: without its user info and query, which may hold credentials
// (nor the opaque part of a URL like http:user:password@host, which would hold them too).
func redact(u *url.URL) string {
	c := *u
	c.User = nil
	c.RawQuery, c.ForceQuery = "", false
	if c.Opaque != "" {
		c.Opaque = "..."
	}
	return c.String()
}

// parseProblem is what url.Parse found wrong, without the URL or the piece of it that the
// error quotes: either may hold user info.
func parseProblem(err error) string {
	msg, _, _ := strings.Cut(unwrapURL(err).Error(), `"`)
	return strings.TrimSpace(msg)
}

func flatHeaders(h http.Header) map[string]string {
	out := make(map[string]string, len(h))
	for k, v := range h {
		out[strings.ToLower(k)] = strings.Join(v, ", ")
	}
	return out
}

// setBody puts body in out: as json when the response says JSON and is, else as text.
func setBody(out *httpOutput, contentType string, body []byte) {
	ct := strings.ToLower(contentType)
	if (strings.Contains(ct, "/json") || strings.Contains(ct, "+json")) && json.Valid(body) {
		out.JSON = body
		return
	}
	s := strings.ToValidUTF8(string(body), "\uFFFD")
	out.Body = &s
}
