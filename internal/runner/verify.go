package runner

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/msbench/msbench/internal/load"
	"github.com/msbench/msbench/internal/results"
	"github.com/msbench/msbench/internal/study"
)

// verify sends every target of every step once and checks the answer, so
// that a misconfigured service fails in seconds, not after a long load of
// errors.
func verify(ctx context.Context, client *http.Client, steps []*study.Step, baseURL string, values map[string]string, log *results.FirstRequests) error {
	for _, st := range steps {
		targets, err := loadTargets(st.Targets, baseURL, values)
		if err != nil {
			return fmt.Errorf("step %s: %w", st.Name, err)
		}
		for _, t := range targets {
			if _, err := send(ctx, client, t, log); err != nil {
				return fmt.Errorf("verify %s: %w", t.Name, err)
			}
		}
	}
	return nil
}

// setup sends the study's setup requests in order and adds what they
// capture to values as setup.NAME.KEY.
func setup(ctx context.Context, client *http.Client, reqs []*study.Target, baseURL string, values map[string]string, log *results.FirstRequests) error {
	for _, r := range reqs {
		t, err := loadTarget(r, baseURL, values)
		if err != nil {
			return fmt.Errorf("setup %s: %w", r.Name, err)
		}
		body, err := send(ctx, client, t, log)
		if err != nil {
			return fmt.Errorf("setup %s: %w", r.Name, err)
		}
		if len(r.Capture) == 0 {
			continue
		}
		var answer map[string]any
		if err := json.Unmarshal(body, &answer); err != nil {
			return fmt.Errorf("setup %s: the answer is not a JSON object: %w", r.Name, err)
		}
		for _, kv := range r.Capture {
			v, ok := answer[kv[1]]
			if !ok {
				return fmt.Errorf("setup %s: no field %q in %q", r.Name, kv[1], clip(body))
			}
			values["setup."+r.Name+"."+kv[0]] = fmt.Sprint(v)
		}
	}
	return nil
}

var probeClient = &http.Client{Timeout: 60 * time.Second}

// client is what msbench's own requests to the deployment go through: on
// a cluster, a generator pod's.
func (d *Deployment) client() *http.Client {
	if d.pods != nil {
		return d.pods.lab.probe
	}
	return probeClient
}

// send makes one request, checks it against the target's expectations and
// notes it in log: these are the first requests a fresh service answers.
func send(ctx context.Context, client *http.Client, t load.Target, log *results.FirstRequests) ([]byte, error) {
	req, err := newRequest(ctx, t)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	resp, err := client.Do(req)
	if err != nil {
		log.Add(t.Name, start, 0, err)
		return nil, err
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	resp.Body.Close()
	log.Add(t.Name, start, resp.StatusCode, err)
	if err != nil {
		return nil, fmt.Errorf("read body: %w", err)
	}
	if !t.ExpectStatus.Has(resp.StatusCode) {
		return nil, fmt.Errorf("status %d, body %q", resp.StatusCode, clip(body))
	}
	if len(t.ExpectBody) > 0 && !bytes.Contains(body, t.ExpectBody) {
		return nil, fmt.Errorf("body %q does not contain %q", clip(body), t.ExpectBody)
	}
	return body, nil
}

func newRequest(ctx context.Context, t load.Target) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, t.Method, t.URL, bytes.NewReader(t.Body))
	if err != nil {
		return nil, err
	}
	for _, h := range t.Header {
		req.Header.Set(h[0], h[1])
	}
	return req, nil
}

func clip(b []byte) string {
	if len(b) > 200 {
		return string(b[:200]) + "…"
	}
	return string(b)
}
