package apitest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/bson"

	"github.com/msbench/msbench/internal/apicheck"
)

// timingNames are the Server-Timing entries of every page: one per call,
// and one for the composition.
var timingNames = []string{"product", "reviews", "recommendations", "shipping", "cart", "compose"}

// checkCatalogue: every store of a deployment holds the catalogue once,
// and the catalogue is the same in every run (the generator is
// deterministic).
func checkCatalogue(ctx context.Context, t *testing.T, st *stores) {
	for _, c := range []struct {
		database, collection string
		want                 int64
	}{
		{"ipc_product", "products", products},
		{"ipc_reviews", "reviews", products},
		{"ipc_recommendations", "recommendations", products},
		{"ipc_cart", "carts", customers},
	} {
		n, err := st.mongo.Database(c.database).Collection(c.collection).CountDocuments(ctx, bson.M{})
		if err != nil || n != c.want {
			t.Errorf("%s.%s has %d documents (%v), want %d", c.database, c.collection, n, err, c.want)
		}
	}
	for table, want := range map[string]int{"shipping_parcels": products, "shipping_customer_zones": customers, "shipping_rates": 18} {
		var n int
		if err := st.sql.QueryRowContext(ctx, "SELECT count(*) FROM "+table).Scan(&n); err != nil || n != want {
			t.Errorf("%s has %d rows (%v), want %d", table, n, err, want)
		}
	}
	var p productInfo
	st.doc(ctx, t, "ipc_product", "products", 1, &p)
	if p.SKU != "IPC-0000001" || p.Name != "Studio Walnut Desk Lamp" || p.PriceCents != 3299 || p.Colour != "natural" {
		t.Errorf("product 1 is %+v, not the catalogue's Studio Walnut Desk Lamp at 3299 cents in natural", p)
	}
	if len(p.Description) < 400 || len(p.Features) < 3 {
		t.Errorf("product 1 has a description of %d bytes and %d features, want a realistic one", len(p.Description), len(p.Features))
	}
}

// checkPages: the page for several products and customers is what the
// stores say, with all five parts and a Server-Timing entry for each call
// and for the composition.
func checkPages(ctx context.Context, t *testing.T, d *deployment) {
	st := d.stores
	for _, c := range []struct {
		product, customer int
		query             string
	}{
		{1, defaultCustomer(1), ""},
		{17, 3, "?customer=3"},
		{500, defaultCustomer(500), ""},
		{999, 1, "?customer=1"},
		{1000, 1000, "?customer=1000"},
	} {
		url := fmt.Sprintf("%s/products/%d%s", d.gateway.base, c.product, c.query)
		before := time.Now().UTC()
		r := apicheck.Get(t, url)
		after := time.Now().UTC()
		if !apicheck.WantStatus(t, url, r, http.StatusOK) {
			continue
		}
		if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
			t.Errorf("%s: Content-Type %q", url, ct)
		}
		got, err := decodePage(r.Body)
		if err != nil {
			t.Errorf("%s: %v in %s", url, err, r.Body)
			continue
		}
		if got.Product.ID != c.product || got.Cart.Customer != c.customer || got.Shipping.Customer != c.customer {
			t.Errorf("%s: page of product %d for customer %d/%d", url, got.Product.ID, got.Cart.Customer, got.Shipping.Customer)
		}
		want := st.expected(ctx, t, c.product, c.customer, before)
		if !samePage(got, want, st.expected(ctx, t, c.product, c.customer, after)) {
			gotJSON, _ := json.MarshalIndent(got, "", " ")
			wantJSON, _ := json.MarshalIndent(want, "", " ")
			t.Errorf("%s: page\n%s\nwant (from the stores)\n%s", url, gotJSON, wantJSON)
		}
		checkCopies(ctx, t, st, got)
		apicheck.WantTimings(t, r, timingNames...)
		if c.product == 17 {
			t.Logf("%s: page of product 17 is %d bytes, in %s", d.name, len(r.Body), r.Header.Get("Server-Timing"))
		}
	}
}

// checkCopies: what the recommendations and the cart show of other
// products agrees with the product service's data.
func checkCopies(ctx context.Context, t *testing.T, st *stores, p page) {
	t.Helper()
	for _, item := range p.Recommendations.Items {
		var info productInfo
		st.doc(ctx, t, "ipc_product", "products", item.ID, &info)
		if item.Name != info.Name || item.PriceCents != info.PriceCents || item.ImageURL != info.ImageURL {
			t.Errorf("recommendation %+v disagrees with product %d: %q %d %q", item, item.ID, info.Name, info.PriceCents, info.ImageURL)
		}
	}
	for _, line := range p.Cart.Items {
		var info productInfo
		st.doc(ctx, t, "ipc_product", "products", line.Product, &info)
		if line.Name != info.Name || line.PriceCents != info.PriceCents {
			t.Errorf("cart line %+v disagrees with product %d: %q %d", line, line.Product, info.Name, info.PriceCents)
		}
	}
}

// checkNotFound: what the data does not have is a 404 saying what.
func checkNotFound(t *testing.T, d *deployment) {
	for path, reason := range map[string]string{
		"/products/1001":                 "no such product 1001",
		"/products/999999999":            "no such product 999999999",
		"/products/1?customer=1001":      "no such customer 1001",
		"/products/1001?customer=999999": "no such product 1001",
	} {
		r := apicheck.Get(t, d.gateway.base+path)
		apicheck.WantError(t, path, r, http.StatusNotFound, reason)
		apicheck.WantTimings(t, r, timingNames...)
	}
	for _, path := range []string{"/products", "/product/1", "/"} {
		apicheck.WantError(t, path, apicheck.Get(t, d.gateway.base+path), http.StatusNotFound, "no route")
	}
}

// checkBadInput: a malformed id or customer is a 400 saying what is wrong,
// whatever it tries to smuggle in, and calls no service.
func checkBadInput(t *testing.T, d *deployment) {
	g := d.gateway
	before := statsOf(t, g)
	long := strings.Repeat("1", 10_000)
	cases := []struct{ target, reason string }{
		{"/products/abc", "decimal integer"},
		{"/products/-1", "decimal integer"},
		{"/products/0", "decimal integer"},
		{"/products/007", "decimal integer"},
		{"/products/+7", "decimal integer"},
		{"/products/1.5", "decimal integer"},
		{"/products/1e3", "decimal integer"},
		{"/products/0x10", "decimal integer"},
		{"/products/1000000000", "decimal integer"},
		{"/products/" + long, "10000 characters"},
		{"/products/1;DROP%20TABLE%20products", "decimal integer"},
		{"/products/1%3BDROP", "decimal integer"},
		{"/products/1'%20OR%20'1'='1", "decimal integer"},
		{"/products/%7B%22$gt%22:%22%22%7D", "decimal integer"},
		{"/products/../../etc/passwd", "decimal integer"},
		{"/products/%2e%2e%2f", "decimal integer"},
		{"/products/%D9%A1", "decimal integer"}, // an Arabic-Indic digit one
		{"/products/1/reviews", "decimal integer"},
		{"/products/", "decimal integer"},
		{"/products/%zz", "not a valid url"},
		{"/products/1?customer=abc", "customer must be"},
		{"/products/1?customer=", "customer must be"},
		{"/products/1?customer=0", "customer must be"},
		{"/products/1?customer=1&customer=2", "more than once"},
		{"/products/1?customer=" + long, "customer must be"},
	}
	for _, c := range cases {
		r := getRaw(t, g.addr, c.target)
		apicheck.WantError(t, fmt.Sprintf("%.60s", c.target), r, http.StatusBadRequest, c.reason)
		if len(r.Body) > 1000 {
			t.Errorf("%.60s: a %d-byte answer echoes the request", c.target, len(r.Body))
		}
	}
	after := statsOf(t, g)
	for _, name := range services {
		if n, m := sum(before.Calls[name]), sum(after.Calls[name]); n != m {
			t.Errorf("%s was called %d times for malformed requests", name, m-n)
		}
	}
}

func sum(counts map[string]int) int {
	n := 0
	for _, c := range counts {
		n += c
	}
	return n
}
