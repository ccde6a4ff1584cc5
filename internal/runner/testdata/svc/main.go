// A minimal service for runner tests: it answers /hello, optionally asking
// a backend first, and can be told to crash after some requests.
package main

import (
	"cmp"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

func main() {
	addr := os.Getenv("ADDR")
	backend := os.Getenv("BACKEND")
	crashAfter, _ := strconv.ParseInt(os.Getenv("CRASH_AFTER"), 10, 64)
	if os.Getenv("FAIL_START") != "" {
		log.Fatal("refusing to start as asked")
	}
	// DIAL: an address that must be reachable before the service starts,
	// such as a dependency seen from an emulated host.
	if dial := os.Getenv("DIAL"); dial != "" {
		c, err := net.DialTimeout("tcp", dial, 5*time.Second)
		if err != nil {
			log.Fatalf("cannot reach %s: %v", dial, err)
		}
		c.Close()
	}
	// TERM_ACTION: a number is the status it exits with on SIGTERM,
	// "ignore" must be killed; unset, the signal ends it.
	switch action := os.Getenv("TERM_ACTION"); action {
	case "":
	case "ignore":
		signal.Ignore(syscall.SIGTERM)
	default:
		status, err := strconv.Atoi(action)
		if err != nil {
			log.Fatalf("TERM_ACTION %q: want a status or ignore", action)
		}
		term := make(chan os.Signal, 1)
		signal.Notify(term, syscall.SIGTERM)
		go func() {
			<-term
			os.Exit(status)
		}()
	}
	// IDLE_SPIN: busy for that long in every 50 ms, load or not, as a
	// JVM's compiler and collector are while it waits its turn.
	if spin, err := time.ParseDuration(cmp.Or(os.Getenv("IDLE_SPIN"), "0s")); err != nil {
		log.Fatalf("IDLE_SPIN: %v", err)
	} else if spin > 0 {
		go func() {
			for {
				for start := time.Now(); time.Since(start) < spin; {
				}
				time.Sleep(50*time.Millisecond - spin)
			}
		}()
	}
	var served atomic.Int64
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, "ok") })
	mux.HandleFunc("GET /stats", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintf(w, `{"served": %d}`, served.Load())
	})
	mux.HandleFunc("POST /stats/reset", func(w http.ResponseWriter, _ *http.Request) { served.Store(0) })
	// JWT_SECRET: /hello wants an HS256 token signed with it.
	secret := os.Getenv("JWT_SECRET")
	mux.HandleFunc("/hello", func(w http.ResponseWriter, r *http.Request) {
		if secret != "" {
			raw, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
			if _, err := jwt.Parse(raw, func(*jwt.Token) (any, error) { return []byte(secret), nil }, jwt.WithValidMethods([]string{"HS256"})); err != nil {
				http.Error(w, err.Error(), http.StatusUnauthorized)
				return
			}
		}
		if n := served.Add(1); crashAfter > 0 && n > crashAfter {
			log.Fatalf("crashing after %d requests as asked", crashAfter)
		}
		start := time.Now()
		word := "hello"
		if backend != "" {
			resp, err := http.Get("http://" + backend + "/hello")
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadGateway)
				return
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			word = "front+" + string(b)
		}
		w.Header().Set("Server-Timing", fmt.Sprintf("handler;dur=%.3f", float64(time.Since(start).Microseconds())/1000))
		w.Header().Set("X-Served", strconv.FormatInt(served.Load(), 10))
		fmt.Fprint(w, word)
	})
	// The runner gives every service a private TMPDIR; its test reads it here.
	// And the cores it started on (the runner may boot it on lent ones).
	status, _ := os.ReadFile("/proc/self/status")
	cpus := regexp.MustCompile(`Cpus_allowed_list:\s*(\S+)`).FindSubmatch(status)
	if cpus == nil {
		log.Fatalf("no Cpus_allowed_list in /proc/self/status")
	}
	log.Printf("listening on %s, started on cores %s, TMPDIR %s", addr, cpus[1], os.Getenv("TMPDIR"))
	log.Fatal(http.ListenAndServe(addr, mux))
}
