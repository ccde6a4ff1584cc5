package apitest

import (
	"bufio"
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"image"
	"net"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/msbench/msbench/internal/apicheck"
	"github.com/msbench/msbench/internal/resources"
)

const (
	// bombSide is the declared width and height of the decompression bombs:
	// 900 megapixels, gigabytes once decoded.
	bombSide = 30000
	// bombAnswer and bombGrowth are the bounds for refusing a bomb:
	// the answer within 1 s, the service's peak memory less than 200 MB
	// above what it was (the issue said RSS; this is memory as a run
	// accounts it, the cgroup's where there is one: a little more).
	bombAnswer = time.Second
	bombGrowth = 200 << 20
	// margin is allowed beyond a server timeout for the server to notice
	// and for the test to see it (Tomcat checks its timeouts every second).
	margin = 2 * time.Second
	// prompt bounds what the server should answer at once; only a hang
	// reaches it.
	prompt = 5 * time.Second
)

// stalledHead starts an upload that declares a body much longer than what
// the callers send.
const stalledHead = "POST /images HTTP/1.1\r\nHost: x\r\n" +
	"Content-Type: multipart/form-data; boundary=b\r\nContent-Length: 100000\r\n\r\n"

// checkHostile sends what a hostile client would: decompression bombs, slow
// and stalled requests, malformed framing, oversized headers and bodies.
// After each the service must still serve.
func checkHostile(t *testing.T, svc *service) {
	for _, b := range []struct{ name, mediaType string }{{"png", "image/png"}, {"jpeg", "image/jpeg"}} {
		t.Run("bomb-"+b.name, func(t *testing.T) {
			data := pngBomb(t)
			if b.name == "jpeg" {
				data = jpegBomb(t)
			}
			if len(data) >= maxImageBytes {
				t.Fatalf("the bomb is %d bytes, not under the %d-byte limit", len(data), maxImageBytes)
			}
			base := svc.resetPeakMemory(t)
			began := time.Now()
			resp := svc.upload(t, "image", "bomb", b.mediaType, data)
			took := time.Since(began)
			growth := svc.memory(t).PeakMemBytes - base
			t.Logf("%d-byte %s bomb: %d in %s, peak memory +%.1f MB",
				len(data), b.name, resp.Status, took.Round(time.Millisecond), float64(growth)/(1<<20))
			apicheck.WantError(t, b.name+" bomb", resp, http.StatusRequestEntityTooLarge, fmt.Sprintf("%dx%d", bombSide, bombSide))
			if took > bombAnswer {
				t.Errorf("answered after %s, want within %s", took, bombAnswer)
			}
			if growth > bombGrowth {
				t.Errorf("peak memory grew by %d MB, want under %d MB", growth>>20, bombGrowth>>20)
			}
			svc.stillServes(t)
		})
	}

	// Tomcat's connection-timeout counts time without a byte, so a drip
	// keeps the connection; its NIO connector reads headers without taking
	// a thread, so no worker is held meanwhile.
	dripSkip := ""
	// Tomcat answers too large headers 400, as RFC 9110 allows; its
	// maintainers keep that over 431.
	headerTooLarge := http.StatusRequestHeaderFieldsTooLarge
	if svc.tomcat {
		dripSkip = "Tomcat has no deadline for the whole header, only between bytes"
		headerTooLarge = http.StatusBadRequest
	}
	// Each check: what to send, how long the server may take, and the
	// answers allowed (0: the connection closed without an answer).
	for _, s := range []struct {
		name   string
		send   func(net.Conn)
		within time.Duration
		want   []int
		skip   string
	}{
		// The headers, then silence.
		{"stalled-headers", func(conn net.Conn) {
			conn.Write([]byte("GET /healthz HTTP/1.1\r\nHost: x\r\n"))
		}, headerTimeout + margin, []int{0, http.StatusBadRequest, http.StatusRequestTimeout}, ""},
		// Slowloris: a byte at a time, each in time, the whole too slow.
		{"dripped-headers", func(conn net.Conn) {
			for _, b := range []byte("GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: " + strings.Repeat("z", 100) + "\r\n\r\n") {
				if _, err := conn.Write([]byte{b}); err != nil {
					return
				}
				time.Sleep(headerTimeout / 4)
			}
		}, headerTimeout + margin, []int{0, http.StatusBadRequest, http.StatusRequestTimeout}, dripSkip},
		// A body shorter than its Content-Length, then silence.
		{"stalled-body", func(conn net.Conn) {
			conn.Write([]byte(stalledHead + "--b\r\nContent-Disposition: form-data; name=\"image\"; filename=\"a.png\"\r\n\r\n\x89PNG"))
		}, bodyTimeout + margin, []int{0, http.StatusBadRequest, http.StatusRequestTimeout}, ""},
		{"malformed-chunked", func(conn net.Conn) {
			conn.Write([]byte("POST /images HTTP/1.1\r\nHost: x\r\nContent-Type: multipart/form-data; boundary=b\r\n" +
				"Transfer-Encoding: chunked\r\n\r\nzz\r\n--b\r\n0\r\n\r\n"))
		}, prompt, []int{http.StatusBadRequest}, ""},
		{"oversized-header", func(conn net.Conn) {
			conn.Write([]byte("GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: " + strings.Repeat("a", 32<<10) + "\r\n\r\n"))
		}, prompt, []int{headerTooLarge}, ""},
		// Declared and sent in full, far beyond the limit.
		{"oversized-body", func(conn net.Conn) {
			const size = 64 << 20
			head := fmt.Sprintf("POST /images HTTP/1.1\r\nHost: x\r\nContent-Type: multipart/form-data; boundary=b\r\n"+
				"Content-Length: %d\r\n\r\n--b\r\nContent-Disposition: form-data; name=\"image\"; filename=\"a.png\"\r\n\r\n", size)
			conn.Write([]byte(head))
			chunk := make([]byte, 64<<10)
			for n := len(head); n < size; n += len(chunk) {
				if _, err := conn.Write(chunk); err != nil {
					return // the server answered and closed
				}
			}
		}, prompt, []int{http.StatusRequestEntityTooLarge}, ""},
	} {
		t.Run(s.name, func(t *testing.T) {
			if s.skip != "" {
				t.Skip(s.skip)
			}
			status, took := svc.raw(t, s.within, s.send)
			t.Logf("answer %d (0: closed) after %s", status, took.Round(time.Millisecond))
			if !slices.Contains(s.want, status) {
				t.Errorf("answer %d (0: closed without one), want one of %v", status, s.want)
			}
			svc.stillServes(t)
		})
	}
}

// raw sends on a connection of its own and waits up to within for the
// server to answer or close it. It returns the status, 0 for a close
// without an answer, and how long that took; a connection still open after
// within fails the test.
func (s *service) raw(t *testing.T, within time.Duration, send func(net.Conn)) (int, time.Duration) {
	t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(s.base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close() // also ends send: its writes fail
	began := time.Now()
	go send(conn)
	conn.SetReadDeadline(began.Add(within))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	took := time.Since(began)
	var netErr net.Error
	switch {
	case errors.As(err, &netErr) && netErr.Timeout():
		t.Fatalf("no answer and the connection still open after %s", within)
	case err != nil:
		return 0, took
	}
	resp.Body.Close()
	return resp.StatusCode, took
}

// stillServes: a readiness check and a normal upload succeed.
func (s *service) stillServes(t *testing.T) {
	t.Helper()
	mustStatus(t, "healthz", s.get(t, "/healthz"), http.StatusOK)
	mustStatus(t, "upload", s.upload(t, "image", "ok.png", "image/png", encodePNG(t, picture(40, 30, 0))), http.StatusCreated)
}

// pngBomb is a valid PNG of bombSide x bombSide 1-bit grey pixels, all
// black: about 110 KB that decode to 112 MB of rows, and to 900 MB in the
// 8-bit image Go's decoder makes of them.
func pngBomb(t *testing.T) []byte {
	t.Helper()
	var b bytes.Buffer
	b.WriteString("\x89PNG\r\n\x1a\n")
	ihdr := binary.BigEndian.AppendUint32(nil, bombSide)
	ihdr = binary.BigEndian.AppendUint32(ihdr, bombSide)
	writeChunk(&b, "IHDR", append(ihdr, 1, 0, 0, 0, 0)) // bit depth 1, greyscale
	var idat bytes.Buffer
	z, err := zlib.NewWriterLevel(&idat, zlib.BestCompression)
	if err != nil {
		t.Fatal(err)
	}
	row := make([]byte, 1+bombSide/8) // filter byte, then 8 pixels a byte
	for range bombSide {
		z.Write(row)
	}
	if err := z.Close(); err != nil {
		t.Fatal(err)
	}
	writeChunk(&b, "IDAT", idat.Bytes())
	writeChunk(&b, "IEND", nil)
	return b.Bytes()
}

func writeChunk(b *bytes.Buffer, typ string, data []byte) {
	binary.Write(b, binary.BigEndian, uint32(len(data)))
	crc := crc32.NewIEEE()
	crc.Write([]byte(typ))
	crc.Write(data)
	b.WriteString(typ)
	b.Write(data)
	binary.Write(b, binary.BigEndian, crc.Sum32())
}

// jpegBomb is a small baseline JPEG whose frame header says bombSide x
// bombSide: a decoder allocates for that before it finds the data short.
func jpegBomb(t *testing.T) []byte {
	t.Helper()
	data := encodeJPEG(t, picture(64, 48, 0))
	i := bytes.Index(data, []byte{0xff, 0xc0}) // SOF0
	if i < 0 {
		t.Fatal("no SOF0 marker in the encoded JPEG")
	}
	// marker (2), length (2), precision (1), height (2), width (2)
	binary.BigEndian.PutUint16(data[i+5:], bombSide)
	binary.BigEndian.PutUint16(data[i+7:], bombSide)
	if cfg, _, err := image.DecodeConfig(bytes.NewReader(data)); err != nil || cfg.Width != bombSide || cfg.Height != bombSide {
		t.Fatalf("patched JPEG: %+v, %v", cfg, err)
	}
	return data
}

// resetPeakMemory starts the service's peak memory again from its use
// now, and returns that use, in bytes.
func (s *service) resetPeakMemory(t *testing.T) int64 {
	t.Helper()
	if err := s.d.ResetPeak(s.name); err != nil {
		// Then the peak may predate the request: a stricter check.
		t.Logf("cannot reset the peak memory: %v", err)
	}
	return s.memory(t).CurrentMemBytes
}

// memory is the service's memory as a run accounts it.
func (s *service) memory(t *testing.T) resources.Usage {
	t.Helper()
	u, err := s.d.Usage(s.name)
	if err != nil {
		t.Fatal(err)
	}
	return u
}
