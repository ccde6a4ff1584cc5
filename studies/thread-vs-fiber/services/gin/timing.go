package main

import (
	"net/http"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"
)

// timingKey is where serverTiming keeps the request's *timing in the context.
const timingKey = "msbench.serverTiming"

// timing collects the stages of one request for the W3C Server-Timing
// header, so msbench can split T_p per request without scraping logs.
// One per request; not safe for concurrent use.
type timing struct {
	start  time.Time
	header []byte
}

// stage starts timing name; calling the returned func records its duration.
func (t *timing) stage(name string) func() {
	begin := time.Now()
	return func() { t.header = appendMetric(t.header, name, time.Since(begin)) }
}

// value is the header: every finished stage, then handler up to now.
func (t *timing) value() string {
	return string(appendMetric(t.header, "handler", time.Since(t.start)))
}

func appendMetric(b []byte, name string, d time.Duration) []byte {
	if len(b) > 0 {
		b = append(b, ", "...)
	}
	b = append(b, name...)
	b = append(b, ";dur="...)
	return strconv.AppendFloat(b, float64(d.Nanoseconds())/1e6, 'f', 3, 64)
}

// requestTiming returns the request's timing, set by serverTiming.
func requestTiming(c *gin.Context) *timing {
	return c.MustGet(timingKey).(*timing)
}

// serverTiming starts the handler clock and makes the response carry the
// header. The header must be set before the first byte of the response, so
// the writer is wrapped rather than the header set after c.Next.
func serverTiming(c *gin.Context) {
	t := &timing{start: time.Now()}
	c.Set(timingKey, t)
	c.Writer = &timingWriter{ResponseWriter: c.Writer, t: t}
	c.Next()
}

// timingWriter sets Server-Timing when the response is committed.
type timingWriter struct {
	gin.ResponseWriter
	t       *timing
	stamped bool
}

func (w *timingWriter) stamp() {
	if !w.stamped {
		w.stamped = true
		w.Header().Set("Server-Timing", w.t.value())
	}
}

func (w *timingWriter) WriteHeaderNow() {
	w.stamp()
	w.ResponseWriter.WriteHeaderNow()
}

func (w *timingWriter) Write(b []byte) (int, error) {
	w.stamp()
	return w.ResponseWriter.Write(b)
}

func (w *timingWriter) WriteString(s string) (int, error) {
	w.stamp()
	return w.ResponseWriter.WriteString(s)
}

// Unwrap lets http.ResponseController reach the connection (deadlines).
func (w *timingWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
