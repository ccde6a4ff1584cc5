package apitest

import (
	"bytes"
	"net/http"
	"net/url"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/msbench/msbench/internal/apicheck"
	"github.com/msbench/msbench/internal/hostile"
)

// client sends requests to a gateway, each on a new connection, so that no
// idle connection of the test's holds a program's shutdown.
type client struct {
	base  string
	token string // a valid bearer token
	http  *http.Client
}

func (c client) get(t *testing.T, pathAndQuery, authorization string) apicheck.Response {
	t.Helper()
	header := http.Header{}
	if authorization != "" {
		header.Set("Authorization", authorization)
	}
	return c.do(t, http.MethodGet, pathAndQuery, header, "")
}

// do sends a request with header and, unless empty, body.
func (c client) do(t *testing.T, method, pathAndQuery string, header http.Header, body string) apicheck.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, c.base+pathAndQuery, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body == "" {
		req.Body = nil
	}
	req.Header = header
	r, err := apicheck.Do(c.http, req)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// universities asks for a country's universities with the valid token.
func (c client) universities(t *testing.T, query string) apicheck.Response {
	t.Helper()
	return c.get(t, "/universities?"+query, "Bearer "+c.token)
}

// records decodes a JSON array of universities; anything else fails.
func records(t *testing.T, r apicheck.Response) []map[string]any {
	t.Helper()
	if !apicheck.WantStatus(t, "universities", r, http.StatusOK) {
		t.FailNow()
	}
	list := apicheck.Decode[[]map[string]any](t, r)
	if list == nil {
		t.Fatalf("answer %v is not a JSON array of records", r)
	}
	return list
}

// stillServes: the hello route answers as it should.
func (c client) stillServes(t *testing.T) {
	t.Helper()
	if r := c.get(t, "/", ""); r.Status != http.StatusOK || string(r.Body) != "Hello World!" {
		t.Fatalf("GET /: %v, want 200 \"Hello World!\"", r)
	}
}

// checkAPI checks a deployment through its gateway.
func checkAPI(t *testing.T, d *deployment, data dataset) {
	values := d.dep.Values()
	c := client{
		base:  d.base,
		token: values["tokens.user.token"],
		http:  &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{DisableKeepAlives: true, Proxy: nil}},
	}
	tokens := newSigner(t, c.token, values["tokens.user.secret"])

	t.Run("hello", func(t *testing.T) {
		r := c.get(t, "/", "")
		if r.Status != http.StatusOK || string(r.Body) != "Hello World!" {
			t.Errorf("GET /: %d %q, want 200 \"Hello World!\" exactly", r.Status, r.Body)
		}
	})

	t.Run("universities", func(t *testing.T) {
		r := c.universities(t, "country=Finland")
		got := records(t, r)
		if want := data.country("Finland"); !reflect.DeepEqual(got, want) {
			t.Errorf("Finland: %d records, want the dataset's %d, in its order\ngot  %.500v\nwant %.500v", len(got), len(want), got, want)
		}
		if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
			t.Errorf("Content-Type %q, want application/json", ct)
		}
		if got := records(t, c.universities(t, "country=Atlantis")); len(got) != 0 {
			t.Errorf("an unknown country: %d records, want an empty list", len(got))
		}
	})

	t.Run("bad-tokens", func(t *testing.T) {
		for _, bad := range tokens.badTokens(t) {
			r := c.get(t, "/universities?country=Finland", bad.header)
			reason := strings.TrimSpace(string(r.Body))
			t.Logf("%s: %d %.300s", bad.name, r.Status, reason)
			if r.Status != http.StatusUnauthorized {
				t.Errorf("%s: status %d, want 401", bad.name, r.Status)
			}
			if reason == "" || !strings.Contains(strings.ToLower(reason), bad.says) {
				t.Errorf("%s: reason %.300q, want one saying %q", bad.name, reason, bad.says)
			}
			c.stillServes(t)
		}
	})

	t.Run("hostile-query", func(t *testing.T) {
		for name, value := range map[string]string{
			"sql":           url.QueryEscape("Finland' OR '1'='1"),
			"html":          url.QueryEscape(`<script>alert("x")</script>`),
			"10KB":          strings.Repeat("x", 10<<10),
			"invalid UTF-8": "%ff",
		} {
			r := c.universities(t, "country="+value)
			t.Logf("%s: %d %.120s", name, r.Status, r.Body)
			switch {
			case r.Status == http.StatusOK:
				if got := records(t, r); len(got) != 0 {
					t.Errorf("%s: %d records, want none", name, len(got))
				}
			case r.Status >= 400 && r.Status < 500 && r.Status != http.StatusUnauthorized:
				if len(bytes.TrimSpace(r.Body)) == 0 {
					t.Errorf("%s: %d without a reason", name, r.Status)
				}
				if bytes.Contains(r.Body, []byte("<script>")) && strings.Contains(r.Header.Get("Content-Type"), "html") {
					t.Errorf("%s: the script comes back as HTML", name)
				}
			default:
				t.Errorf("%s: %v, want 200 and an empty list, or a 4xx saying why", name, r)
			}
			c.stillServes(t)
		}
	})

	t.Run("hostile-requests", func(t *testing.T) {
		head := "GET /universities?country=Finland HTTP/1.1\r\nHost: gateway\r\nContent-Type: application/json\r\n" +
			"Authorization: Bearer " + c.token + "\r\n"
		cases := d.fw.hostile(hostile.Cases(head, limits))
		hostile.Check(t, d.fw.name, d.dep.Addr("gateway"), cases, c.stillServes)
	})

	t.Run("hostile-backends", func(t *testing.T) {
		for _, b := range d.fw.backends {
			header := http.Header{"Content-Type": {"application/json"}}
			head := b.method + " " + b.path + " HTTP/1.1\r\nHost: " + b.name + "\r\nContent-Type: application/json\r\n"
			for _, kv := range b.header {
				header.Set(kv[0], kv[1])
				head += kv[0] + ": " + kv[1] + "\r\n"
			}
			cases := d.fw.backendHostile(hostile.Cases(head, d.fw.backendLimits))
			addr := d.dep.Addr(b.name)
			direct := client{base: "http://" + addr, http: c.http}
			hostile.Check(t, d.fw.name+" "+b.name, addr, cases, func(t *testing.T) {
				r := direct.do(t, b.method, b.path, header.Clone(), b.body)
				if r.Status != http.StatusOK || r.Header.Get("Micro-Error") != "" {
					t.Fatalf("%s: %s %s: %v (Micro-Error %q), want 200", b.name, b.method, b.path, r, r.Header.Get("Micro-Error"))
				}
			})
		}
	})

	// Last, because it changes the dataset: the Finnish universities are
	// taken out of the file. Read per request, they are gone at once; read
	// at start, they are still served.
	t.Run("load-"+d.load, func(t *testing.T) {
		var rest []map[string]any
		for _, r := range data.records {
			if r["country"] != "Finland" {
				rest = append(rest, r)
			}
		}
		replace(t, d.dataset, rest)
		want := map[string]int{"per-request": 0, "startup": finnish}[d.load]
		if got := records(t, c.universities(t, "country=Finland")); len(got) != want {
			t.Errorf("UNIVERSITIES_LOAD=%s, Finland taken out of the file: %d records, want %d", d.load, len(got), want)
		}
		if got := records(t, c.universities(t, "country=Sweden")); len(got) != len(data.country("Sweden")) {
			t.Errorf("Sweden: %d records, want %d", len(got), len(data.country("Sweden")))
		}
	})

	c.stillServes(t)
}
