package main

import (
	"net/http"
	"net/http/httptest"
	"regexp"
	"testing"

	"github.com/gin-gonic/gin"
)

// TestServerTimingHeader: stages in order, then handler, each in ms with
// decimals, on a response written by c.JSON as on one written by c.Data.
func TestServerTimingHeader(t *testing.T) {
	gin.SetMode(gin.TestMode)
	r := gin.New()
	r.Use(serverTiming)
	r.GET("/json", func(c *gin.Context) {
		requestTiming(c).stage("fetch")()
		c.JSON(http.StatusNotFound, gin.H{"error": "x"})
	})
	r.GET("/data", func(c *gin.Context) { c.Data(http.StatusOK, "image/png", []byte("x")) })

	for path, want := range map[string]string{
		"/json": `^fetch;dur=\d+\.\d{3}, handler;dur=\d+\.\d{3}$`,
		"/data": `^handler;dur=\d+\.\d{3}$`,
	} {
		w := httptest.NewRecorder()
		r.ServeHTTP(w, httptest.NewRequest(http.MethodGet, path, nil))
		if got := w.Header().Get("Server-Timing"); !regexp.MustCompile(want).MatchString(got) {
			t.Errorf("%s: Server-Timing %q, want %s", path, got, want)
		}
	}
}
