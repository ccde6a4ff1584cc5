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

	"github.com/msbench/msbench/internal/apicheck"
)

// failedParts reads which parts a 502 or 504 names.
func failedParts(t *testing.T, r apicheck.Response) []string {
	t.Helper()
	var e struct {
		Failed map[string]string `json:"failed"`
	}
	if err := json.Unmarshal(r.Body, &e); err != nil {
		t.Errorf("error page %v: %v", r, err)
	}
	return slices.Sorted(maps.Keys(e.Failed))
}

// checkServiceHung pauses d's product service (SIGSTOP): its gateway
// answers 504 naming it once the call timeout has passed, and pages are
// good again once it resumes.
func checkServiceHung(t *testing.T, d *deployment) {
	const name = "product"
	resume := d.pause(t, name)
	defer resume()
	r := apicheck.Get(t, d.gateway.base+"/products/7")
	resume()
	apicheck.WantError(t, "page with "+name+" hung", r, http.StatusGatewayTimeout, "did not all answer in time")
	if parts := failedParts(t, r); !slices.Equal(parts, []string{name}) {
		t.Errorf("page with %s hung names %v as failed: %v", name, parts, r)
	}
	apicheck.WantTimings(t, r, timingNames...)
	if r.Took < callTimeout*9/10 || r.Took > callTimeout+2*time.Second {
		t.Errorf("page with %s hung answered after %v, want after the call timeout, %v", name, r.Took, callTimeout)
	}
	if !answersPage(d.gateway, 10*time.Second) {
		t.Errorf("no page 10 s after %s resumed", name)
	}
}

// checkServiceKilled kills d's product service (SIGKILL): pages fail with
// a 502 naming it, at once rather than at the call timeout; restarted on
// the same address, it serves the same pages again.
func checkServiceKilled(ctx context.Context, t *testing.T, d *deployment) {
	if err := d.dep.Kill("product"); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		r := apicheck.Get(t, fmt.Sprintf("%s/products/%d", d.gateway.base, 7+i))
		apicheck.WantError(t, "page without product", r, http.StatusBadGateway, "product failed")
		if parts := failedParts(t, r); !slices.Equal(parts, []string{"product"}) {
			t.Errorf("page without product names %v as failed", parts)
		}
		if r.Took >= callTimeout {
			t.Errorf("page without product took %v, want an answer before the call timeout", r.Took)
		}
	}
	began := time.Now()
	if err := d.dep.Restart(ctx, "product"); err != nil {
		t.Fatalf("restart product: %v\n%s", err, d.services["product"].log())
	}
	if !answersPage(d.gateway, 20*time.Second) {
		t.Fatalf("no page 20 s after product was restarted; its log:\n%s", d.services["product"].log())
	}
	t.Logf("%s: pages again %s after product was started again", d.name, time.Since(began).Round(time.Millisecond))
	checkPages(ctx, t, d)
}
