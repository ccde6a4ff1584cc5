package apitest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/msbench/msbench/internal/apicheck"
)

const (
	// deadlineHeader carries a call's deadline, ms since the epoch: an
	// HTTP header, gRPC metadata, an AMQP message header.
	deadlineHeader = "x-deadline"
	// deadlineDefault is the services' DEADLINE_DEFAULT_MS, the budget of
	// a call without a usable deadline; deadlineMax their DEADLINE_MAX_MS
	// (set by variantOf), the most time a call gets however far its
	// deadline.
	deadlineDefault = 3 * time.Second
	deadlineMax     = 4 * time.Second
	// floodPages is how many pages a backlog check asks for at once, all
	// of which time out: without deadlines, the 4 × floodPages lookups
	// left behind in FerretDB take seconds after the stores are back.
	floodPages = 400
	// prefetch is the amqp services' PREFETCH, the default.
	prefetch = 64
	// After a flood, a page answered 200 within quickPage must come within
	// recoverWithin of the stores and the product service resuming. Had
	// the services kept the flood's calls, every page would be a 504, after
	// the call timeout, for several seconds. On a machine so busy that a
	// page takes long before the flood too, both stretch with it (see
	// recoveryBounds).
	quickPage     = callTimeout / 2
	recoverWithin = callTimeout
)

// deadlineStats is what a service says of the calls it did not serve
// because of their deadline: dropped before reaching the store, or
// abandoned to a store that did not answer in time.
type deadlineStats struct {
	Dropped   int `json:"dropped"`
	Abandoned int `json:"abandoned"`
	Waiting   int `json:"waiting"`
	Busy      int `json:"busy"`
}

func (s deadlineStats) total() int { return s.Dropped + s.Abandoned }

// dropWatch reads how many calls a service dropped since it was made: from
// GET /stats where the service serves HTTP, else from the lines its log
// gets, one a second at most while it drops calls.
type dropWatch struct {
	p      *program
	base   deadlineStats
	offset int64
}

var dropLine = regexp.MustCompile(`past their deadline: (\d+) calls dropped before the store, (\d+) abandoned to it`)

func watchDrops(t *testing.T, p *program) *dropWatch {
	t.Helper()
	w := &dropWatch{p: p}
	if p.servesHTTP() {
		w.base = serviceStats(t, p)
	} else if fi, err := os.Stat(p.logPath); err == nil {
		w.offset = fi.Size()
	}
	return w
}

func serviceStats(t *testing.T, p *program) deadlineStats {
	t.Helper()
	r := apicheck.Get(t, p.base+"/stats")
	var s struct {
		Deadline *deadlineStats `json:"deadline"`
	}
	if r.Status != http.StatusOK || json.Unmarshal(r.Body, &s) != nil || s.Deadline == nil {
		t.Errorf("%s %s /stats: %v", p.style, p.name, r)
		return deadlineStats{}
	}
	return *s.Deadline
}

// since is what the service dropped and abandoned since the watch began.
func (w *dropWatch) since(t *testing.T) deadlineStats {
	t.Helper()
	if w.p.servesHTTP() {
		s := serviceStats(t, w.p)
		s.Dropped -= w.base.Dropped
		s.Abandoned -= w.base.Abandoned
		return s
	}
	var s deadlineStats
	data, err := os.ReadFile(w.p.logPath)
	if err != nil {
		t.Fatal(err)
	}
	if int64(len(data)) < w.offset {
		return s
	}
	for _, m := range dropLine.FindAllStringSubmatch(string(data[w.offset:]), -1) {
		d, _ := strconv.Atoi(m[1])
		a, _ := strconv.Atoi(m[2])
		s.Dropped += d
		s.Abandoned += a
	}
	return s
}

// waitDrops waits until the service reports at least want calls dropped
// or abandoned (the log lags by a second), and returns what it reports.
func (w *dropWatch) waitDrops(t *testing.T, want int) deadlineStats {
	t.Helper()
	var s deadlineStats
	eventually(3*time.Second, func() bool {
		s = w.since(t)
		return s.total() >= want
	})
	return s
}

func epochMs(t time.Time) string { return strconv.FormatInt(t.UnixMilli(), 10) }

// grpcCall calls service's method on conn with request, deadline metadata
// values (none: no metadata) and, if timeout > 0, a gRPC deadline; without
// one the call carries no grpc-timeout at all and is cut by the client
// after a minute.
func grpcCall(conn *grpc.ClientConn, name string, request []byte, timeout time.Duration, values ...string) (time.Duration, error) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if timeout > 0 {
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	} else {
		stop := time.AfterFunc(time.Minute, cancel)
		defer stop.Stop()
	}
	for _, v := range values {
		ctx = metadata.AppendToOutgoingContext(ctx, deadlineHeader, v)
	}
	var reply []byte
	began := time.Now()
	err := conn.Invoke(ctx, methods[name], request, &reply, grpc.ForceCodec(rawCodec{}))
	return time.Since(began), err
}

// amqpProbe publishes requests by hand to a service's queue and collects
// the replies, by correlation id.
type amqpProbe struct {
	conn    *amqp.Connection
	ch      *amqp.Channel
	queue   string
	mu      sync.Mutex
	replies map[string][]byte
}

func newAMQPProbe(t *testing.T, brokerURL, name string) *amqpProbe {
	t.Helper()
	conn, err := amqp.Dial(brokerURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	q, err := ch.QueueDeclare("ipc.reply.apitest-"+name, false, true, true, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	answers, err := ch.Consume(q.Name, "", true, true, false, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	p := &amqpProbe{conn: conn, ch: ch, queue: q.Name, replies: map[string][]byte{}}
	go func() {
		for a := range answers {
			p.mu.Lock()
			p.replies[a.CorrelationId] = a.Body
			p.mu.Unlock()
		}
	}()
	return p
}

func (p *amqpProbe) publish(ctx context.Context, t *testing.T, queue, id, body string, headers amqp.Table) {
	t.Helper()
	msg := amqp.Publishing{Body: []byte(body), ReplyTo: p.queue, CorrelationId: id, ContentType: "application/json", Headers: headers}
	if err := p.ch.PublishWithContext(ctx, "", queue, false, false, msg); err != nil {
		t.Fatal(err)
	}
}

func (p *amqpProbe) reply(id string) ([]byte, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	b, ok := p.replies[id]
	return b, ok
}

// checkHostileDeadlines sends the product service directly, in its style,
// deadlines a broken or hostile client sends: none, malformed ones (text,
// a sign, a fraction, 20 digits, twice, the wrong type) get the default
// budget and are answered; one a year ahead is answered too (cut to the
// services' cap, which checkDeadlineCap checks); one already past is
// dropped without an answer from the store, and counted. The service
// keeps serving.
func checkHostileDeadlines(ctx context.Context, t *testing.T, d *deployment) {
	s := d.services["product"]
	w := watchDrops(t, s)
	now := time.Now()
	future := epochMs(now.Add(365 * 24 * time.Hour))
	past := []string{"1", epochMs(now.Add(-time.Second))}
	malformed := []string{"", "soon", "-1", "+1", "1.5e12", "0x10", strings.Repeat("9", 20), strings.Repeat("1", 4000)}
	switch d.style {
	case "rest":
		url := s.base + "/products/17"
		for _, v := range append(malformed, future) {
			r, err := fetch(url, http.Header{deadlineHeader: {v}})
			if err != nil || r.Status != http.StatusOK {
				t.Errorf("product with %s %.40q: %v %v, want 200", deadlineHeader, v, r, err)
			}
		}
		if r, err := fetch(url, http.Header{}); err != nil || r.Status != http.StatusOK {
			t.Errorf("product without %s: %v %v, want 200", deadlineHeader, r, err)
		}
		if r, err := fetch(url, http.Header{deadlineHeader: {future, past[0]}}); err != nil || r.Status != http.StatusOK {
			t.Errorf("product with %s twice: %v %v, want 200 (malformed: the default budget)", deadlineHeader, r, err)
		}
		for _, v := range past {
			r, err := fetch(url, http.Header{deadlineHeader: {v}})
			if err != nil {
				t.Fatal(err)
			}
			apicheck.WantError(t, "product with a deadline past", r, http.StatusGatewayTimeout, "deadline")
			if r.Took > time.Second {
				t.Errorf("product with a deadline past answered after %v, want at once", r.Took)
			}
		}
	case "grpc":
		conn, err := grpc.NewClient(s.addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		request := idRequest("product", 17)
		for _, v := range append(malformed, future) {
			if _, err := grpcCall(conn, "product", request, 0, v); err != nil {
				t.Errorf("product with %s %.40q: %v, want an answer", deadlineHeader, v, err)
			}
		}
		if _, err := grpcCall(conn, "product", request, 0); err != nil {
			t.Errorf("product with no deadline at all: %v, want an answer", err)
		}
		if _, err := grpcCall(conn, "product", request, 0, future, past[0]); err != nil {
			t.Errorf("product with %s twice: %v, want an answer (malformed: the default budget)", deadlineHeader, err)
		}
		if _, err := grpcCall(conn, "product", request, 10*time.Second, future); err != nil {
			t.Errorf("product with a gRPC deadline and %s a year ahead: %v, want an answer", deadlineHeader, err)
		}
		for _, v := range past {
			took, err := grpcCall(conn, "product", request, 10*time.Second, v)
			if status.Code(err) != codes.DeadlineExceeded || took > time.Second {
				t.Errorf("product with %s past: %v after %v, want DEADLINE_EXCEEDED at once", deadlineHeader, err, took)
			}
		}
	case "amqp":
		p := newAMQPProbe(t, d.broker, "hostile-deadlines")
		headers := map[string]amqp.Table{
			"none":     nil,
			"future":   {deadlineHeader: now.Add(365 * 24 * time.Hour).UnixMilli()},
			"text":     {deadlineHeader: "soon"},
			"digits":   {deadlineHeader: epochMs(now.Add(time.Minute))},
			"negative": {deadlineHeader: int64(-5)},
			"float":    {deadlineHeader: 1e300},
			"table":    {deadlineHeader: amqp.Table{"at": int64(1)}},
			"array":    {deadlineHeader: []any{int64(1)}},
			"bytes":    {deadlineHeader: []byte("1")},
			"bool":     {deadlineHeader: true},
		}
		for i, v := range past {
			ms, _ := strconv.ParseInt(v, 10, 64)
			p.publish(ctx, t, "ipc.product", fmt.Sprintf("past-%d", i), `{"product":17}`, amqp.Table{deadlineHeader: ms})
		}
		for id, h := range headers {
			p.publish(ctx, t, "ipc.product", id, `{"product":17}`, h)
		}
		if !eventually(10*time.Second, func() bool {
			for id := range headers {
				if _, ok := p.reply(id); !ok {
					return false
				}
			}
			return true
		}) {
			t.Errorf("not every request with a malformed, missing or far deadline was answered")
		}
		for id := range headers {
			if body, ok := p.reply(id); ok && !strings.Contains(string(body), `"ok"`) {
				t.Errorf("request with deadline %s: reply %s", id, body)
			}
		}
		time.Sleep(200 * time.Millisecond) // published first, the past ones were handled before the rest
		for i := range past {
			if body, ok := p.reply(fmt.Sprintf("past-%d", i)); ok {
				t.Errorf("request with a deadline past was answered: %s", body)
			}
		}
	}
	if got := w.waitDrops(t, len(past)); got.Dropped != len(past) || got.Abandoned != 0 {
		t.Errorf("%s product reports %d calls dropped and %d abandoned, want the %d past their deadline dropped", d.style, got.Dropped, got.Abandoned, len(past))
	}
	if !apicheck.WantStatus(t, "page after hostile deadlines", apicheck.Get(t, d.gateway.base+"/products/7"), http.StatusOK) {
		t.Logf("the product service's log:\n%s", s.log())
	}
}

// checkDeadlineCap hangs each style's FerretDB (and the PostgreSQL it
// keeps its documents in) and asks the style's product service for a
// product with a deadline a year ahead and with none: the service gives
// up on the store after its cap (DEADLINE_MAX_MS) and its default budget
// (DEADLINE_DEFAULT_MS), rather than waiting for the store as long as the
// client says or forever.
func checkDeadlineCap(ctx context.Context, t *testing.T, ds map[string]*deployment) {
	var resumes []func()
	resume := func() {
		for _, r := range resumes {
			r()
		}
	}
	defer resume()
	for _, style := range styles {
		resumes = append(resumes, ds[style].pause(t, "mongo"))
	}
	future := epochMs(time.Now().Add(365 * 24 * time.Hour))
	// within says whether took is the budget, give or take scheduling.
	within := func(took, budget time.Duration) bool {
		return took >= budget*9/10 && took <= budget+1500*time.Millisecond
	}

	var wg sync.WaitGroup
	wg.Add(3)
	go func() {
		defer wg.Done()
		s := ds["rest"].services["product"]
		var inner sync.WaitGroup
		for _, c := range []struct {
			what   string
			header http.Header
			budget time.Duration
		}{{"a deadline a year ahead", http.Header{deadlineHeader: {future}}, deadlineMax}, {"no deadline", http.Header{}, deadlineDefault}} {
			inner.Add(1)
			go func() {
				defer inner.Done()
				r, err := fetch(s.base+"/products/18", c.header)
				if err != nil || r.Status != http.StatusGatewayTimeout || !within(r.Took, c.budget) {
					t.Errorf("rest product with %s and the store hung: %v %v after %v, want 504 after %v", c.what, r, err, r.Took, c.budget)
				}
			}()
		}
		inner.Wait()
	}()
	go func() {
		defer wg.Done()
		s := ds["grpc"].services["product"]
		conn, err := grpc.NewClient(s.addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			t.Error(err)
			return
		}
		defer conn.Close()
		var inner sync.WaitGroup
		for _, c := range []struct {
			what   string
			values []string
			budget time.Duration
		}{{"a deadline a year ahead", []string{future}, deadlineMax}, {"no deadline", nil, deadlineDefault}} {
			inner.Add(1)
			go func() {
				defer inner.Done()
				took, err := grpcCall(conn, "product", idRequest("product", 18), 0, c.values...)
				if status.Code(err) != codes.DeadlineExceeded || !within(took, c.budget) {
					t.Errorf("grpc product with %s and the store hung: %v after %v, want DEADLINE_EXCEEDED after %v", c.what, err, took, c.budget)
				}
			}()
		}
		inner.Wait()
	}()
	go func() {
		defer wg.Done()
		s := ds["amqp"].services["product"]
		w := watchDrops(t, s)
		p := newAMQPProbe(t, ds["amqp"].broker, "deadline-cap")
		ms, _ := strconv.ParseInt(future, 10, 64)
		began := time.Now()
		p.publish(ctx, t, "ipc.product", "future", `{"product":18}`, amqp.Table{deadlineHeader: ms})
		p.publish(ctx, t, "ipc.product", "none", `{"product":18}`, nil)
		// Abandoned once the budget is over: the default first, then the cap.
		for i, budget := range []time.Duration{deadlineDefault, deadlineMax} {
			time.Sleep(time.Until(began.Add(budget * 9 / 10)))
			if got := w.since(t).Abandoned; got != i {
				t.Errorf("amqp product abandoned %d calls after %v with the store hung, want %d", got, time.Since(began), i)
			}
			if got := w.waitDrops(t, i+1).Abandoned; got != i+1 || time.Since(began) > budget+1500*time.Millisecond {
				t.Errorf("amqp product abandoned %d calls after %v with the store hung, want %d by %v", got, time.Since(began), i+1, budget)
			}
		}
		for _, id := range []string{"future", "none"} {
			if body, ok := p.reply(id); ok {
				t.Errorf("amqp product answered a call it abandoned: %s", body)
			}
		}
	}()
	wg.Wait()
	resume()
	for _, style := range styles {
		if !answersPage(ds[style].gateway, 10*time.Second) {
			t.Errorf("%s: no page 10 s after FerretDB resumed", style)
		}
	}
}

// checkBacklog hangs both stores and the product service of d and floods
// its gateway with floodPages pages at once, all of which time out; then resumes them
// and asks for pages. Had the services kept the calls their callers gave
// up on, they would now run them all against the stores, and every page
// would wait behind them for seconds: a page must instead be answered 200,
// quickly, right away, because the services dropped those calls at their
// deadlines (and say so). In amqp the broker drops the requests that
// expired in the queues, and does not keep them.
func checkBacklog(t *testing.T, d *deployment) {
	g := d.gateway
	watches := map[string]*dropWatch{}
	for _, name := range services {
		watches[name] = watchDrops(t, d.services[name])
	}
	var deadBefore int
	if d.style == "amqp" {
		deadBefore = queueDepth(t, d.broker, deadLetters)
	}
	quick, within := recoveryBounds(t, g)
	resume := d.pause(t, "mongo", "mysql", "product")
	defer resume()

	began := time.Now()
	results := make([]apicheck.Response, floodPages)
	errs := make([]error, floodPages)
	var wg sync.WaitGroup
	for i := range floodPages {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i], errs[i] = fetch(fmt.Sprintf("%s/products/%d", g.base, 1+i), nil)
		}()
	}
	wg.Wait()
	flooded := time.Since(began)
	bad := 0
	for i, r := range results {
		if errs[i] != nil || r.Status != http.StatusGatewayTimeout || r.Took < callTimeout*9/10 {
			if bad++; bad <= 3 {
				t.Errorf("flood page %d: %v %v after %v, want 504 after %v", 1+i, r, errs[i], r.Took, callTimeout)
			}
		}
	}
	if bad > 0 {
		t.Errorf("%d of %d flood pages were not 504 after the call timeout; the gateway's log:\n%s", bad, floodPages, g.log())
	}

	// Pages from right after the resume: one answered 200 well within the
	// call timeout must come within recoverWithin. (Not necessarily the
	// first: the machine is still busy a moment with the flood's closed
	// connections.)
	resume()
	back := time.Now()
	var first, good apicheck.Response
	tries := 0
	for good.Status == 0 {
		r, err := fetch(g.base+"/products/999", nil)
		if err != nil {
			t.Fatal(err)
		}
		if tries++; tries == 1 {
			first = r
		}
		if r.Status == http.StatusOK && r.Took <= quick {
			good = r
		} else if time.Since(back) > within {
			break
		}
	}
	t.Logf("%s: %d pages timed out in %v; the first page after resuming: %d in %v (Server-Timing %s); a good page after %d tries, %v after resuming",
		d.name, floodPages, flooded.Round(time.Millisecond), first.Status, first.Took.Round(time.Millisecond), first.Header.Get("Server-Timing"), tries, time.Since(back).Round(time.Millisecond))
	if first.Status != http.StatusOK {
		t.Logf("the first page after resuming: %v", first)
	}
	if good.Status == 0 {
		t.Errorf("no page answered 200 within %v in the %v after resuming (the first: %v after %v): the stale calls were run, not dropped", quick, within, first, first.Took)
	}

	// What each service says it dropped. In rest and grpc every service
	// had each page's call: the product service dropped them on arrival
	// (those still to be read when it resumed), the others while they
	// waited for the store or when the store did not answer in time. In
	// amqp a service takes at most PREFETCH requests at a time; the broker
	// drops the rest once expired, so the paused product service is
	// delivered no more than it had taken.
	counts := map[string]deadlineStats{}
	for _, name := range services {
		want := floodPages * 9 / 10
		if d.style == "amqp" {
			want = prefetch
		}
		if d.style == "grpc" && name == "product" {
			// Resumed, it reads each call with its cancellation: grpc-js
			// may end such a call before the handler sees it.
			want = 0
		}
		counts[name] = watches[name].waitDrops(t, want)
		if got := counts[name].total(); got < want {
			t.Errorf("%s %s reports %d calls dropped or abandoned at their deadline, want at least %d of the %d; its log:\n%s", d.style, name, got, want, floodPages, d.services[name].log())
		}
	}
	t.Logf("%s: dropped, abandoned by service: %v", d.name, counts)
	if d.style == "amqp" {
		if got := counts["product"].total(); got > prefetch+floodPages/10 {
			t.Errorf("amqp product was delivered %d requests after resuming, want no more than it had taken (%d): the broker should drop the expired", got, prefetch)
		}
		for _, name := range services {
			if !eventually(5*time.Second, func() bool { return queueDepth(t, d.broker, "ipc."+name) == 0 }) {
				t.Errorf("ipc.%s still holds %d requests 5 s after the flood", name, queueDepth(t, d.broker, "ipc."+name))
			}
		}
		if n := queueDepth(t, d.broker, deadLetters); n != deadBefore {
			t.Errorf("%s holds %d messages after the flood, %d before: expired requests are not to be kept", deadLetters, n, deadBefore)
		}
	}
}

// recoveryBounds are quickPage and recoverWithin, stretched to how long a
// page takes on this machine now, before any flood: at least 4 and 8
// times the slowest of three pages. Idle, a page takes milliseconds and
// the bounds are the constants, which a backlog of the flood's 1,600
// lookups exceeds; starved of CPU by other work, a healthy gateway's
// first page after resuming took 3 s, and a bound the machine's own
// slowness crosses would fail a correct program. That the services
// dropped the flood's calls is checked on their own counts as well.
func recoveryBounds(t *testing.T, g *program) (quick, within time.Duration) {
	t.Helper()
	var slowest time.Duration
	for range 3 {
		r, err := fetch(g.base+"/products/999", nil)
		if err != nil || r.Status != http.StatusOK {
			t.Fatalf("a page before the flood: %v %v", r, err)
		}
		slowest = max(slowest, r.Took)
	}
	return max(quickPage, 4*slowest), max(recoverWithin, 8*slowest)
}

// queueDepth is how many messages a queue holds that no consumer has.
func queueDepth(t *testing.T, brokerURL, queue string) int {
	t.Helper()
	conn, err := amqp.Dial(brokerURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	q, err := ch.QueueDeclarePassive(queue, true, false, false, false, nil)
	if err != nil {
		t.Fatalf("queue %s: %v", queue, err)
	}
	return q.Messages
}
