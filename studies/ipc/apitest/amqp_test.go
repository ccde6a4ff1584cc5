package apitest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/msbench/msbench/internal/apicheck"
)

// deadLetters is the queue the services reject what they cannot read into.
const deadLetters = "ipc.dead"

// checkMalformedAMQP publishes to a service's request queue what no
// service can read: each lands in the dead-letter queue exactly once, is
// not delivered again, and the service goes on answering, also to a
// well-formed request published by hand.
func checkMalformedAMQP(ctx context.Context, t *testing.T, d *deployment) {
	conn, err := amqp.Dial(d.broker)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ch, err := conn.Channel()
	if err != nil {
		t.Fatal(err)
	}
	dead, err := ch.Consume(deadLetters, "", true, false, false, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	replies, err := ch.QueueDeclare("ipc.reply.apitest", false, true, true, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	answers, err := ch.Consume(replies.Name, "", true, true, false, false, nil)
	if err != nil {
		t.Fatal(err)
	}

	bad := map[string]amqp.Publishing{
		"not-json":       {Body: []byte("product=1"), ReplyTo: replies.Name, CorrelationId: "c1"},
		"not-an-object":  {Body: []byte("[1]"), ReplyTo: replies.Name, CorrelationId: "c2"},
		"id-as-text":     {Body: []byte(`{"product":"1"}`), ReplyTo: replies.Name, CorrelationId: "c3"},
		"id-zero":        {Body: []byte(`{"product":0}`), ReplyTo: replies.Name, CorrelationId: "c4"},
		"extra-field":    {Body: []byte(`{"product":1,"customer":2}`), ReplyTo: replies.Name, CorrelationId: "c5"},
		"no-reply-to":    {Body: []byte(`{"product":1}`), CorrelationId: "c6"},
		"foreign-reply":  {Body: []byte(`{"product":1}`), ReplyTo: "ipc.cart", CorrelationId: "c7"},
		"no-correlation": {Body: []byte(`{"product":1}`), ReplyTo: replies.Name},
		"huge":           {Body: []byte(`{"product":1,"pad":"` + strings.Repeat("x", 100_000) + `"}`), ReplyTo: replies.Name, CorrelationId: "c8"},
	}
	for id, msg := range bad {
		msg.MessageId = id
		msg.DeliveryMode = amqp.Persistent
		if err := ch.PublishWithContext(ctx, "", "ipc.product", false, false, msg); err != nil {
			t.Fatal(err)
		}
	}
	good := amqp.Publishing{Body: []byte(`{"product":17}`), ReplyTo: replies.Name, CorrelationId: "good", ContentType: "application/json"}
	if err := ch.PublishWithContext(ctx, "", "ipc.product", false, false, good); err != nil {
		t.Fatal(err)
	}

	select {
	case a := <-answers:
		var reply struct {
			OK productInfo `json:"ok"`
		}
		if err := json.Unmarshal(a.Body, &reply); err != nil || a.CorrelationId != "good" || reply.OK.ID != 17 {
			t.Errorf("reply %q with correlation id %q, want product 17 for %q", a.Body, a.CorrelationId, "good")
		}
	case <-time.After(20 * time.Second):
		t.Error("no reply to a well-formed request published by hand")
	}

	seen := map[string]int{}
	timeout := time.After(20 * time.Second)
	var settled <-chan time.Time // once all have come: anything delivered again would come by then
collect:
	for {
		select {
		case m := <-dead:
			seen[m.MessageId]++
			deaths, _ := m.Headers["x-death"].([]any)
			if len(deaths) != 1 || deaths[0].(amqp.Table)["queue"] != "ipc.product" ||
				deaths[0].(amqp.Table)["reason"] != "rejected" || deaths[0].(amqp.Table)["count"] != int64(1) {
				t.Errorf("%s dead-lettered with x-death %v, want rejected once from ipc.product", m.MessageId, m.Headers["x-death"])
			}
			if len(seen) == len(bad) && settled == nil {
				settled = time.After(2 * time.Second)
			}
		case <-settled:
			break collect
		case <-timeout:
			break collect
		}
	}
	for id := range bad {
		if seen[id] != 1 {
			t.Errorf("%s arrived in %s %d times, want once", id, deadLetters, seen[id])
		}
	}
	if q, err := ch.QueueDeclarePassive("ipc.product", true, false, false, false, nil); err != nil || q.Messages != 0 {
		t.Errorf("ipc.product holds %d messages (%v) after the bad ones, want none", q.Messages, err)
	}
	apicheck.WantStatus(t, "page after malformed messages", apicheck.Get(t, d.gateway.base+"/products/7"), http.StatusOK)
}

// outcome is one page requested during the broker restart.
type outcome struct {
	id   int
	r    apicheck.Response
	err  error
	sent time.Time
}

// checkBrokerRestart restarts d's RabbitMQ under a stream of page
// requests, while requests published before it wait in the queues, and
// checks that no confirmed request is lost: those are answered after the
// restart, the others fail at once saying why, nothing times out, and the
// services and the gateway reconnect by themselves. d's gateway waits
// brokerCallTimeout for a call, long enough for the restart.
func checkBrokerRestart(ctx context.Context, t *testing.T, d *deployment) {
	g := d.gateway
	base := statsOf(t, g)

	// Requests confirmed by the broker and queued while the services are
	// paused; the broker is restarted before any is answered.
	resumeServices := d.pause(t, services...)
	defer resumeServices()
	const queued = 8
	var (
		mu       sync.Mutex
		outcomes []outcome
		wg       sync.WaitGroup
	)
	request := func(id int) {
		defer wg.Done()
		began := time.Now()
		r, err := fetch(fmt.Sprintf("%s/products/%d", g.base, id), nil)
		mu.Lock()
		outcomes = append(outcomes, outcome{id: id, r: r, err: err, sent: began})
		mu.Unlock()
	}
	for i := range queued {
		wg.Add(1)
		go request(100 + i)
	}
	if !eventually(20*time.Second, func() bool { return statsOf(t, g).Transport.Confirmed >= base.Transport.Confirmed+5*queued }) {
		t.Fatalf("the broker did not confirm the %d requests: %+v", 5*queued, statsOf(t, g).Transport)
	}

	// A stream of requests from before the restart until after it.
	stop := make(chan struct{})
	var stream sync.WaitGroup
	for w := range 4 {
		stream.Add(1)
		go func() {
			defer stream.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				wg.Add(1)
				request(200 + 10*w + i%10)
				time.Sleep(20 * time.Millisecond) // a client's pace, not a tight loop on fast failures
			}
		}()
	}
	restarted := make(chan error, 1)
	began := time.Now()
	go func() { restarted <- d.dep.Restart(ctx, "broker") }()
	// With the broker down, which the gateway's health says, a page fails
	// at once, saying why.
	if !eventually(20*time.Second, func() bool {
		r, err := fetch(g.base+"/healthz", nil)
		return err == nil && r.Status == http.StatusServiceUnavailable
	}) {
		t.Fatal("the gateway did not lose the broker within 20 s of its restart")
	}
	wg.Add(1)
	request(7)
	if err := <-restarted; err != nil {
		t.Fatal(err)
	}
	t.Logf("broker restarted in %s", time.Since(began).Round(time.Millisecond))
	// Resumed only now, the services cannot have answered the queued
	// requests before the broker went down.
	resumeServices()
	if !answersPage(g, 30*time.Second) {
		t.Fatalf("no page 30 s after the broker restarted; gateway log:\n%s", g.log())
	}
	back := time.Now()
	time.Sleep(time.Second) // the stream goes on with the broker back
	close(stop)
	stream.Wait()
	wg.Wait()

	counts := map[string]int{}
	for _, o := range outcomes {
		switch {
		case o.err != nil:
			t.Errorf("page %d: %v", o.id, o.err)
		case o.r.Status == http.StatusBadGateway && brokerRefused(o.r.Body):
			counts["refused"]++
			if o.id != 7 && o.id < 200 {
				t.Errorf("queued page %d, confirmed before the restart, failed: %v", o.id, o.r)
			}
		case o.id == 7:
			t.Errorf("page 7, asked with the broker down: %v, want a 502 saying the broker is not there", o.r)
		case o.r.Status == http.StatusOK:
			counts["ok"]++
			p, err := decodePage(o.r.Body)
			if err != nil || p.Product.ID != o.id {
				t.Errorf("page %d: %v (%v)", o.id, o.r, err)
			}
			if o.id < 200 {
				counts["queued ok"]++
			}
		default:
			t.Errorf("page %d sent %s after the restart began: %v", o.id, o.sent.Sub(began).Round(time.Millisecond), o.r)
		}
	}
	t.Logf("during the restart: %v", counts)
	if counts["refused"] == 0 {
		t.Error("no page was refused while the broker was down")
	}
	if counts["queued ok"] != queued {
		t.Errorf("%d of the %d queued pages were answered", counts["queued ok"], queued)
	}

	after := statsOf(t, g)
	for name, c := range after.Calls {
		if c["timeout"] != base.Calls[name]["timeout"] {
			t.Errorf("%s: %d calls timed out during the restart", name, c["timeout"]-base.Calls[name]["timeout"])
		}
	}
	if after.Transport.Pending != 0 || after.Transport.Connects < base.Transport.Connects+1 {
		t.Errorf("after the restart the gateway has %d calls pending and %d connects, want none pending and a reconnect", after.Transport.Pending, after.Transport.Connects)
	}
	// The same processes, which no one started again: they reconnected by
	// themselves.
	for _, p := range d.programs() {
		if !apicheck.WantStatus(t, p.name+" /healthz after the restart", apicheck.Get(t, p.base+"/healthz"), http.StatusOK) {
			t.Logf("%s's log:\n%s", p.name, p.log())
		}
	}
	// The pages after the restart are the data's, not something stale.
	checkPages(ctx, t, d)
	t.Logf("pages served again %s after the broker was back", time.Since(back).Round(time.Millisecond))
}

// brokerRefused tells a page that failed because the gateway could not hand
// a request to the broker, which it says at once.
func brokerRefused(body []byte) bool {
	var e struct {
		Failed map[string]string `json:"failed"`
	}
	if json.Unmarshal(body, &e) != nil || len(e.Failed) == 0 {
		return false
	}
	for _, reason := range e.Failed {
		if reason != "not connected to the broker" && reason != "the broker did not confirm the request" {
			return false
		}
	}
	return true
}
