package load

import (
	"bytes"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/valyala/fasthttp"
)

// Target is one request the load sends, with its share of the mix.
type Target struct {
	Name   string
	Method string
	URL    string
	Header [][2]string
	Body   []byte
	Weight int // relative share; 0 counts as 1
	// ExpectStatus lists the codes that count as success; empty means 2xx.
	ExpectStatus StatusSet
	// ExpectBody, when set, must occur in a successful response.
	ExpectBody []byte
}

// ValidateURL accepts absolute http and https URLs with a host.
func ValidateURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("bad URL %q: %w", raw, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("bad URL %q: scheme must be http or https", raw)
	}
	if u.Host == "" {
		return nil, fmt.Errorf("bad URL %q: no host", raw)
	}
	return u, nil
}

// CheckMethod refuses a method that is not an RFC 9110 token. The method is
// written verbatim: a space would break the request line, and a CRLF would
// end the request and start another that the server reads as sent.
func CheckMethod(method string) error {
	if !isToken(method) {
		return fmt.Errorf("method %q: want an HTTP token (letters, digits and !#$%%&'*+-.^_`|~, RFC 9110 §5.6.2)", method)
	}
	return nil
}

// CheckHeader refuses a header field that would not travel as one field:
// a name that is not a token, or a value holding a control character other
// than tab (CR and LF would start a new header or a new request).
func CheckHeader(name, value string) error {
	if !isToken(name) {
		return fmt.Errorf("header name %q: want an HTTP token (letters, digits and !#$%%&'*+-.^_`|~, RFC 9110 §5.6.2)", name)
	}
	if i := strings.IndexFunc(value, func(r rune) bool { return (r < ' ' && r != '\t') || r == 0x7f }); i >= 0 {
		return fmt.Errorf("header %s: value %q holds the control character %q (RFC 9110 §5.5)", name, value, value[i])
	}
	return nil
}

func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0) {
			return false
		}
	}
	return true
}

// prepared is a target turned into the bytes the loop sends.
type prepared struct {
	wire         []byte
	head         bool // a response to HEAD has no body whatever its headers say
	bytesOut     int64
	expectStatus StatusSet
	expectBody   []byte
}

func prepare(t Target) (prepared, error) {
	if _, err := ValidateURL(t.URL); err != nil {
		return prepared{}, err
	}
	method := t.Method
	if method == "" {
		method = fasthttp.MethodGet
	}
	if err := CheckMethod(method); err != nil {
		return prepared{}, err
	}
	for _, h := range t.Header {
		if err := CheckHeader(h[0], h[1]); err != nil {
			return prepared{}, err
		}
	}
	req := fasthttp.AcquireRequest()
	defer fasthttp.ReleaseRequest(req)
	req.SetRequestURI(t.URL)
	req.Header.SetMethod(method)
	for _, h := range t.Header {
		if strings.EqualFold(h[0], "Host") {
			req.Header.SetHost(h[1])
			continue
		}
		req.Header.Set(h[0], h[1])
	}
	if len(t.Body) > 0 {
		req.SetBody(t.Body)
	}
	// As fasthttp's client would add it.
	if len(req.Header.UserAgent()) == 0 {
		req.Header.SetUserAgent("msbench")
	}
	var wire bytes.Buffer
	if _, err := req.WriteTo(&wire); err != nil {
		return prepared{}, fmt.Errorf("target %s: %w", t.Name, err)
	}
	status := t.ExpectStatus
	if status == (StatusSet{}) {
		status = Success2xx()
	}
	return prepared{wire: wire.Bytes(), head: method == fasthttp.MethodHead, bytesOut: int64(wire.Len()), expectStatus: status, expectBody: t.ExpectBody}, nil
}

// mix picks targets by sequence number: a table in which each target
// appears Weight times, so the mix is exact and costs one index per request.
type mix []uint16

func newMix(targets []Target) (mix, error) {
	if len(targets) == 0 {
		return nil, errors.New("no target")
	}
	if len(targets) > 1<<16 {
		return nil, fmt.Errorf("%d targets: at most %d", len(targets), 1<<16)
	}
	g := 0
	for _, t := range targets {
		if t.Weight < 0 {
			return nil, fmt.Errorf("target %s: negative weight", t.Name)
		}
		g = gcd(g, max(t.Weight, 1))
	}
	// Each target's share, reduced; the table holds them interleaved
	// (smooth weighted round robin) rather than each share in a block.
	counts := make([]int, len(targets))
	total := 0
	for i, t := range targets {
		counts[i] = max(t.Weight, 1) / g
		total += counts[i]
	}
	if total > 1<<20 {
		return nil, errors.New("target weights too fine: reduce them")
	}
	out := make(mix, 0, total)
	credit := make([]int, len(targets))
	for range total {
		best := -1
		for i := range targets {
			credit[i] += counts[i]
			if best < 0 || credit[i] > credit[best] {
				best = i
			}
		}
		credit[best] -= total
		out = append(out, uint16(best))
	}
	return out, nil
}

func (m mix) pick(seq uint64) uint16 { return m[seq%uint64(len(m))] }

func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}
