package main

import (
	"net/http/httptest"
	"regexp"
	"testing"
	"time"
)

func TestTimedWriter(t *testing.T) {
	rec := httptest.NewRecorder()
	tm := &timing{start: time.Now()}
	tm.stage("cache")()
	stop := tm.stage("db")
	time.Sleep(2 * time.Millisecond)
	stop()
	w := &timedWriter{ResponseWriter: rec, t: tm}
	w.Write([]byte("body"))
	w.WriteHeader(500) // too late: net/http ignores it, and so must the header
	got := rec.Header().Get("Server-Timing")
	if !regexp.MustCompile(`^cache;dur=\d+\.\d{3}, db;dur=([2-9]|\d\d+)\.\d{3}, handler;dur=\d+\.\d{3}$`).MatchString(got) {
		t.Errorf("Server-Timing %q, want cache, db (at least 2 ms) and handler in ms", got)
	}
	if rec.Code != 200 {
		t.Errorf("status %d, want the implicit 200 of the first Write", rec.Code)
	}
}
