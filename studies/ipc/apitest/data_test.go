package apitest

import (
	"bytes"
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"reflect"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	_ "github.com/go-sql-driver/mysql"
	"go.mongodb.org/mongo-driver/bson"
	"go.mongodb.org/mongo-driver/mongo"
	"go.mongodb.org/mongo-driver/mongo/options"
)

// The product page, as the gateway composes it from the five replies.
type page struct {
	Product         productInfo        `json:"product"`
	Reviews         reviewSummary      `json:"reviews"`
	Recommendations recommendationList `json:"recommendations"`
	Shipping        shippingOptions    `json:"shipping"`
	Cart            cartContents       `json:"cart"`
}

type productInfo struct {
	ID          int      `json:"id" bson:"id"`
	SKU         string   `json:"sku" bson:"sku"`
	Name        string   `json:"name" bson:"name"`
	Brand       string   `json:"brand" bson:"brand"`
	Category    string   `json:"category" bson:"category"`
	Colour      string   `json:"colour" bson:"colour"`
	PriceCents  int      `json:"price_cents" bson:"price_cents"`
	Currency    string   `json:"currency" bson:"currency"`
	ImageURL    string   `json:"image_url" bson:"image_url"`
	Description string   `json:"description" bson:"description"`
	Features    []string `json:"features" bson:"features"`
}

type review struct {
	ID     string `json:"id" bson:"id"`
	Author string `json:"author" bson:"author"`
	Rating int    `json:"rating" bson:"rating"`
	Title  string `json:"title" bson:"title"`
	Body   string `json:"body" bson:"body"`
	Date   string `json:"date" bson:"date"`
}

type reviewSummary struct {
	Product int      `json:"product"`
	Count   int      `json:"count"`
	Average float64  `json:"average"`
	Latest  []review `json:"latest"`
}

type recommendation struct {
	ID         int    `json:"id" bson:"id"`
	Name       string `json:"name" bson:"name"`
	PriceCents int    `json:"price_cents" bson:"price_cents"`
	ImageURL   string `json:"image_url" bson:"image_url"`
}

type recommendationList struct {
	Product int              `json:"product"`
	Items   []recommendation `json:"items"`
}

type shippingOption struct {
	Carrier    string `json:"carrier"`
	Service    string `json:"service"`
	PriceCents int    `json:"price_cents"`
	Earliest   string `json:"earliest"`
	Latest     string `json:"latest"`
}

type shippingOptions struct {
	Product   int              `json:"product"`
	Customer  int              `json:"customer"`
	Zone      string           `json:"zone"`
	ShipsFrom string           `json:"ships_from"`
	Options   []shippingOption `json:"options"`
}

type cartLine struct {
	Product    int    `json:"product" bson:"product"`
	Name       string `json:"name" bson:"name"`
	PriceCents int    `json:"price_cents" bson:"price_cents"`
	Quantity   int    `json:"quantity" bson:"quantity"`
}

type cartContents struct {
	Customer   int        `json:"customer"`
	Items      []cartLine `json:"items"`
	ItemCount  int        `json:"item_count"`
	TotalCents int        `json:"total_cents"`
	Currency   string     `json:"currency"`
}

// The services' constants the data does not hold.
const (
	products   = 1000 // PRODUCTS's default
	customers  = 1000
	latestShow = 5 // reviews on a page
)

// defaultCustomer is the customer a page without ?customer= is for.
func defaultCustomer(product int) int { return 1 + product*7919%customers }

// stores reads what the services keep, to say what a page must show.
type stores struct {
	mongo *mongo.Client
	sql   *sql.DB
	// close disconnects, once; before the stores stop, for the Mongo
	// driver waits for a server to end its sessions on (30 s) otherwise.
	close func()
}

// openStores connects to a deployment's FerretDB and MariaDB.
func openStores(ctx context.Context, t *testing.T, mongoURL, mariaDSN string) *stores {
	t.Helper()
	mc, err := mongo.Connect(ctx, options.Client().ApplyURI(mongoURL))
	if err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("mysql", mariaDSN)
	if err != nil {
		mc.Disconnect(context.Background())
		t.Fatal(err)
	}
	s := &stores{mongo: mc, sql: db}
	s.close = sync.OnceFunc(func() {
		mc.Disconnect(context.Background())
		db.Close()
	})
	t.Cleanup(s.close)
	return s
}

func (s *stores) doc(ctx context.Context, t *testing.T, database, collection string, id int, into any) {
	t.Helper()
	err := s.mongo.Database(database).Collection(collection).FindOne(ctx, bson.M{"_id": strconv.Itoa(id)}).Decode(into)
	if err != nil {
		t.Fatalf("%s.%s %d: %v", database, collection, id, err)
	}
}

// expected is the page for product and customer on day (UTC), read from
// the stores and put together here, independently of the services.
func (s *stores) expected(ctx context.Context, t *testing.T, product, customer int, day time.Time) page {
	t.Helper()
	var p page
	s.doc(ctx, t, "ipc_product", "products", product, &p.Product)

	var reviews struct {
		Reviews []review `bson:"reviews"`
	}
	s.doc(ctx, t, "ipc_reviews", "reviews", product, &reviews)
	p.Reviews = reviewSummary{Product: product, Count: len(reviews.Reviews), Latest: reviews.Reviews[:min(latestShow, len(reviews.Reviews))]}
	if n := len(reviews.Reviews); n > 0 {
		sum := 0
		for _, r := range reviews.Reviews {
			sum += r.Rating
		}
		p.Reviews.Average = math.Round(float64(100*sum)/float64(n)) / 100
	}

	p.Recommendations.Product = product
	s.doc(ctx, t, "ipc_recommendations", "recommendations", product, &p.Recommendations)

	p.Cart = cartContents{Customer: customer, Currency: "EUR"}
	s.doc(ctx, t, "ipc_cart", "carts", customer, &p.Cart)
	for _, line := range p.Cart.Items {
		p.Cart.ItemCount += line.Quantity
		p.Cart.TotalCents += line.Quantity * line.PriceCents
	}

	p.Shipping = s.shipping(ctx, t, product, customer, day)
	// JSON has [] where the stores may give nil.
	p.Product.Features = orEmpty(p.Product.Features)
	p.Reviews.Latest = orEmpty(p.Reviews.Latest)
	p.Recommendations.Items = orEmpty(p.Recommendations.Items)
	p.Cart.Items = orEmpty(p.Cart.Items)
	return p
}

// shipping prices the parcel for each service of the customer's zone:
// the base plus the price per started kilogram, ordered by price.
func (s *stores) shipping(ctx context.Context, t *testing.T, product, customer int, day time.Time) shippingOptions {
	t.Helper()
	o := shippingOptions{Product: product, Customer: customer}
	var weight, handling int
	err := s.sql.QueryRowContext(ctx, "SELECT weight_grams, handling_days, warehouse FROM shipping_parcels WHERE product_id = ?", product).Scan(&weight, &handling, &o.ShipsFrom)
	if err == nil {
		err = s.sql.QueryRowContext(ctx, "SELECT zone FROM shipping_customer_zones WHERE customer_id = ?", customer).Scan(&o.Zone)
	}
	if err != nil {
		t.Fatalf("shipping of %d to %d: %v", product, customer, err)
	}
	rows, err := s.sql.QueryContext(ctx, "SELECT carrier, service, base_cents, per_kg_cents, days_min, days_max FROM shipping_rates WHERE zone = ?", o.Zone)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var opt shippingOption
		var base, perKg, daysMin, daysMax int
		if err := rows.Scan(&opt.Carrier, &opt.Service, &base, &perKg, &daysMin, &daysMax); err != nil {
			t.Fatal(err)
		}
		opt.PriceCents = base + perKg*((weight+999)/1000)
		opt.Earliest = day.AddDate(0, 0, handling+daysMin).Format(time.DateOnly)
		opt.Latest = day.AddDate(0, 0, handling+daysMax).Format(time.DateOnly)
		o.Options = append(o.Options, opt)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(o.Options, func(a, b shippingOption) int {
		return cmp.Or(cmp.Compare(a.PriceCents, b.PriceCents), cmp.Compare(a.Carrier, b.Carrier), cmp.Compare(a.Service, b.Service))
	})
	return o
}

func orEmpty[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// decodePage reads a page strictly: exactly the five parts, no field the
// test does not know.
func decodePage(body []byte) (page, error) {
	var parts map[string]json.RawMessage
	if err := json.Unmarshal(body, &parts); err != nil {
		return page{}, err
	}
	if got := slices.Sorted(maps.Keys(parts)); !slices.Equal(got, []string{"cart", "product", "recommendations", "reviews", "shipping"}) {
		return page{}, fmt.Errorf("the page has the parts %v", got)
	}
	var p page
	d := json.NewDecoder(bytes.NewReader(body))
	d.DisallowUnknownFields()
	return p, d.Decode(&p)
}

// samePage compares a page with what it should be; earliest and latest
// delivery dates may be of either day when the request spanned midnight.
func samePage(got page, want ...page) bool {
	for _, w := range want {
		if reflect.DeepEqual(got, w) {
			return true
		}
	}
	return false
}
