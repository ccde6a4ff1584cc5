package runner

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/msbench/msbench/internal/proc"
	"github.com/msbench/msbench/internal/study"
)

// verify sends every target of every step once and checks the answer, so
// that a misconfigured service fails in seconds, not after a long load of
// errors.
func verify(ctx context.Context, steps []*study.Step, baseURL, root string) error {
	client := &http.Client{Timeout: 30 * time.Second}
	for _, st := range steps {
		targets, err := loadTargets(st, baseURL, root)
		if err != nil {
			return fmt.Errorf("step %s: %w", st.Name, err)
		}
		for _, t := range targets {
			req, err := http.NewRequestWithContext(ctx, t.Method, t.URL, bytes.NewReader(t.Body))
			if err != nil {
				return fmt.Errorf("verify %s: %w", t.Name, err)
			}
			for _, h := range t.Header {
				req.Header.Set(h[0], h[1])
			}
			resp, err := client.Do(req)
			if err != nil {
				return fmt.Errorf("verify %s: %w", t.Name, err)
			}
			body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
			resp.Body.Close()
			if err != nil {
				return fmt.Errorf("verify %s: read body: %w", t.Name, err)
			}
			if !t.ExpectStatus.Has(resp.StatusCode) {
				return fmt.Errorf("verify %s: status %d, body %q", t.Name, resp.StatusCode, clip(body))
			}
			if len(t.ExpectBody) > 0 && !bytes.Contains(body, t.ExpectBody) {
				return fmt.Errorf("verify %s: body %q does not contain %q", t.Name, clip(body), t.ExpectBody)
			}
		}
	}
	return nil
}

func clip(b []byte) string {
	if len(b) > 200 {
		return string(b[:200]) + "…"
	}
	return string(b)
}

func logTail(in *instance) string { return proc.LogTail(in.proc.LogPath(), 20) }
