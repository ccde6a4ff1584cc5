package hostile

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestInTime(t *testing.T) {
	atOnce := Case{Name: "at once"}
	timeout := Case{Name: "by a 2 s timeout", Limit: 2 * time.Second}
	for _, c := range []struct {
		name         string
		c            Case
		took, served time.Duration
		want         bool
	}{
		{"answered at once", atOnce, 20 * time.Millisecond, 10 * time.Millisecond, true},
		{"a slow handler on a loaded machine", atOnce, 1300 * time.Millisecond, 1200 * time.Millisecond, true},
		{"waited out a timeout it should not have", atOnce, 2100 * time.Millisecond, 50 * time.Millisecond, false},
		{"ended by its timeout", timeout, 2050 * time.Millisecond, 10 * time.Millisecond, true},
		{"ended well before its timeout", timeout, 1500 * time.Millisecond, 10 * time.Millisecond, false},
		{"ended long after its timeout", timeout, 3200 * time.Millisecond, 10 * time.Millisecond, false},
		{"after its timeout, slowed as a normal request was", timeout, 3200 * time.Millisecond, 400 * time.Millisecond, true},
	} {
		if got := inTime(c.c, c.took, c.served); got != c.want {
			t.Errorf("%s: took %v, a normal request %v: in time %v, want %v", c.name, c.took, c.served, got, c.want)
		}
	}
}

// A server whose every answer takes longer than the margin, a hostile
// request's as a normal one's, answers in time: its handler is slow, it
// waited for nothing.
func TestCheckAllowsAServerSlowForEveryRequest(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		time.Sleep(Margin + 300*time.Millisecond)
		// As Tomcat answers a GET: net/http would otherwise first read
		// the body, which the hostile request never finishes.
		w.Header().Set("Connection", "close")
		w.Write([]byte("ok"))
	}))
	defer srv.Close()
	short := Case{Name: "body shorter than its length", Request: "GET / HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{",
		Statuses: []int{http.StatusOK}, Reason: "ok"}
	Check(t, "slow", strings.TrimPrefix(srv.URL, "http://"), []Case{short}, func(t *testing.T) {
		resp, err := http.Get(srv.URL)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("normal request: %s", resp.Status)
		}
	})
}
