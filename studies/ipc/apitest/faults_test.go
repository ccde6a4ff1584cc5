package apitest

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/msbench/msbench/internal/deps"
	"github.com/msbench/msbench/internal/proc"
)

// failedParts reads which parts a 502 or 504 names.
func failedParts(t *testing.T, r response) []string {
	t.Helper()
	var e struct {
		Failed map[string]string `json:"failed"`
	}
	if err := json.Unmarshal(r.body, &e); err != nil {
		t.Errorf("error page %v: %v", r, err)
	}
	return slices.Sorted(maps.Keys(e.Failed))
}

// checkServiceHung pauses the product service (SIGSTOP): g answers 504
// naming it once its call timeout has passed, and pages are good again
// once it resumes.
func checkServiceHung(t *testing.T, g, s *program, timeout time.Duration) {
	if err := s.proc.Pause(); err != nil {
		t.Fatal(err)
	}
	r := get(t, g.base+"/products/7")
	if err := s.proc.Resume(); err != nil {
		t.Fatal(err)
	}
	wantError(t, "page with "+s.name+" hung", r, http.StatusGatewayTimeout, "did not all answer in time")
	if parts := failedParts(t, r); !slices.Equal(parts, []string{s.name}) {
		t.Errorf("page with %s hung names %v as failed: %v", s.name, parts, r)
	}
	checkTiming(t, "page with "+s.name+" hung", r)
	if r.took < timeout*9/10 || r.took > timeout+2*time.Second {
		t.Errorf("page with %s hung answered after %v, want after the call timeout, %v", s.name, r.took, timeout)
	}
	if !eventually(10*time.Second, func() bool {
		r, err := fetch(g.base + "/products/7")
		return err == nil && r.status == http.StatusOK
	}) {
		t.Errorf("no page 10 s after %s resumed", s.name)
	}
}

// checkServiceKilled kills the product service (SIGKILL): pages fail with
// a 502 naming it, at once rather than at the call timeout; restarted on
// the same address, it serves the same pages again.
func checkServiceKilled(ctx context.Context, t *testing.T, f *fleet, d *deployment, st *stores) {
	s := d.services["product"]
	if err := s.proc.Kill(); err != nil {
		t.Fatal(err)
	}
	<-s.proc.Done()
	for i := range 3 {
		r := get(t, fmt.Sprintf("%s/products/%d", d.gateway.base, 7+i))
		wantError(t, "page without product", r, http.StatusBadGateway, "product failed")
		if parts := failedParts(t, r); !slices.Equal(parts, []string{"product"}) {
			t.Errorf("page without product names %v as failed", parts)
		}
		if r.took >= callTimeout {
			t.Errorf("page without product took %v, want an answer before the call timeout", r.took)
		}
	}
	began := time.Now()
	f.start(ctx, t, s)
	waitReady(ctx, t, s)
	if !eventually(20*time.Second, func() bool {
		r, err := fetch(d.gateway.base + "/products/7")
		return err == nil && r.status == http.StatusOK
	}) {
		t.Fatalf("no page 20 s after product was restarted; its log:\n%s", s.log())
	}
	t.Logf("%s: pages again %s after product was started again", d.style, time.Since(began).Round(time.Millisecond))
	checkPages(ctx, t, d, st)
}

// checkBrokerTimeout starts a second amqp gateway with a 1 s call timeout
// beside the first (each has its own reply queue) and hangs the product
// service under it: the page is a 504 naming it, after the timeout.
func checkBrokerTimeout(ctx context.Context, t *testing.T, f *fleet, out string, ports *proc.PortAllocator, d *deployment, rabbit *deps.Instance) {
	g := f.launch(ctx, t, out, ports, "amqp", "gateway", []string{"AMQP_URL=" + rabbit.URL, "CALL_TIMEOUT_MS=1000"})
	waitReady(ctx, t, g)
	wantStatus(t, "page from a second gateway", get(t, g.base+"/products/7"), http.StatusOK)
	checkServiceHung(t, g, d.services["product"], time.Second)
}
