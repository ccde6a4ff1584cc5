package apitest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"io"
	"math/rand/v2"
	"mime/multipart"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/msbench/msbench/internal/deps"
	"github.com/msbench/msbench/internal/deps/depstest"
	"github.com/msbench/msbench/internal/proc"
	"github.com/msbench/msbench/internal/servertiming"
)

// testTimeout bounds the whole test, Maven build and JVM starts included.
const testTimeout = 4 * time.Minute

// TestImageServices builds and starts the Gin service and both variants of
// the Spring service against one Postgres, each with its own database, and
// runs the same API checks on each.
func TestImageServices(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Postgres, builds and starts three services")
	}
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	t.Cleanup(cancel)
	ports := &proc.PortAllocator{}
	pg := depstest.Start(ctx, t, deps.Postgres, "tvf-postgres", ports)

	t.Run("gin", func(t *testing.T) {
		t.Parallel()
		bin := buildGin(ctx, t)
		dbURL, db := depstest.CreateDatabase(ctx, t, pg, "gin")
		svc := startGin(ctx, t, bin, dbURL, ports)
		checkAPI(ctx, t, svc.base, db)
		checkHostile(t, svc)
	})
	t.Run("spring", func(t *testing.T) {
		t.Parallel()
		buildSpring(ctx, t)
		for _, virtual := range []bool{false, true} {
			name, executor := "platform-threads", "ThreadPoolExecutor"
			if virtual {
				name, executor = "virtual-threads", "VirtualThreadExecutor"
			}
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				dbURL, db := depstest.CreateDatabase(ctx, t, pg, "spring_"+strings.ReplaceAll(name, "-", "_"))
				svc, logPath := startSpring(ctx, t, virtual, dbURL, ports)
				checkExecutor(t, logPath, executor)
				checkAPI(ctx, t, svc.base, db)
				checkHostile(t, svc)
			})
		}
	})
}

// checkExecutor: the variant really runs requests on the executor it was
// configured for, as the service logs at start.
func checkExecutor(t *testing.T, logPath, want string) {
	t.Helper()
	log, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(log), "\n") {
		if strings.Contains(line, "Tomcat runs requests on") {
			if !strings.Contains(line, want) {
				t.Errorf("want requests on %s, log says: %s", want, line)
			}
			return
		}
	}
	t.Errorf("log does not say which executor runs requests:\n%s", proc.LogTail(logPath, 20))
}

// created is the POST /images answer.
type created struct {
	ID            int64  `json:"id"`
	ContentType   string `json:"content_type"`
	Size          int    `json:"size"`
	ThumbnailSize int    `json:"thumbnail_size"`
	Width         int    `json:"width"`
	Height        int    `json:"height"`
}

func checkAPI(ctx context.Context, t *testing.T, base string, db *pgx.Conn) {
	c := client{base: base}
	pngData := encodePNG(t, picture(300, 500, 0))   // portrait: height is the long side
	jpegData := encodeJPEG(t, picture(640, 480, 0)) // landscape
	for _, up := range []struct {
		name, mediaType, decoder string
		data                     []byte
		width, height            int
	}{
		{"png", "image/png", "png", pngData, 300, 500},
		{"jpeg", "image/jpeg", "jpeg", jpegData, 640, 480},
	} {
		t.Run("upload-"+up.name, func(t *testing.T) {
			// A misleading client content type: the service must sniff.
			resp := c.upload(t, "image", "upload.bin", "application/octet-stream", up.data)
			wantStatus(t, resp, http.StatusCreated)
			wantTimings(t, resp, "decode", "process", "persist", "handler")
			var got created
			if err := json.Unmarshal(resp.body, &got); err != nil {
				t.Fatalf("answer %q: %v", resp.body, err)
			}
			want := created{ID: got.ID, ContentType: up.mediaType, Size: len(up.data),
				ThumbnailSize: got.ThumbnailSize, Width: up.width, Height: up.height}
			if got.ID <= 0 || got.ThumbnailSize <= 0 || got != want {
				t.Errorf("answer %+v, want %+v with positive id and thumbnail_size", got, want)
			}
			if loc := resp.header.Get("Location"); loc != "/images/"+strconv.FormatInt(got.ID, 10) {
				t.Errorf("Location %q for id %d", loc, got.ID)
			}
			id := strconv.FormatInt(got.ID, 10)

			orig := c.get(t, "/images/"+id)
			wantStatus(t, orig, http.StatusOK)
			wantTimings(t, orig, "fetch", "handler")
			if ct := orig.header.Get("Content-Type"); ct != up.mediaType {
				t.Errorf("original Content-Type %q, want %q", ct, up.mediaType)
			}
			if !bytes.Equal(orig.body, up.data) {
				t.Errorf("original: %d bytes differ from the %d uploaded", len(orig.body), len(up.data))
			}

			thumb := c.get(t, "/images/"+id+"/thumbnail")
			wantStatus(t, thumb, http.StatusOK)
			wantTimings(t, thumb, "fetch", "handler")
			if ct := thumb.header.Get("Content-Type"); ct != up.mediaType {
				t.Errorf("thumbnail Content-Type %q, want %q", ct, up.mediaType)
			}
			if len(thumb.body) != got.ThumbnailSize {
				t.Errorf("thumbnail %d bytes, answer said %d", len(thumb.body), got.ThumbnailSize)
			}
			img, format, err := image.Decode(bytes.NewReader(thumb.body))
			if err != nil {
				t.Fatalf("thumbnail does not decode: %v", err)
			}
			b := img.Bounds()
			wantW, wantH := 128*up.width/up.height, 128 // rounding aside
			if up.width > up.height {
				wantW, wantH = 128, 128*up.height/up.width
			}
			if format != up.decoder || max(b.Dx(), b.Dy()) != 128 || abs(b.Dx()-wantW) > 1 || abs(b.Dy()-wantH) > 1 {
				t.Errorf("thumbnail %s %dx%d, want %s about %dx%d", format, b.Dx(), b.Dy(), up.decoder, wantW, wantH)
			}
		})
	}

	rowsBefore := countRows(ctx, t, db)
	overLimit := encodePNG(t, picture(400, 400, 255)) // noise does not compress
	if len(overLimit) <= maxImageBytes {
		t.Fatalf("over-limit image is only %d bytes", len(overLimit))
	}
	truncated := pngData[:len(pngData)/2]
	for _, bad := range []struct {
		name   string
		send   func(*testing.T) response
		status int
	}{
		{"text-file", func(t *testing.T) response {
			return c.upload(t, "image", "notes.png", "image/png", []byte("plain text, named like an image\n"))
		}, http.StatusUnsupportedMediaType},
		{"truncated-png", func(t *testing.T) response {
			return c.upload(t, "image", "half.png", "image/png", truncated)
		}, http.StatusUnsupportedMediaType},
		{"missing-field", func(t *testing.T) response {
			return c.upload(t, "picture", "a.png", "image/png", pngData)
		}, http.StatusBadRequest},
		{"empty-file", func(t *testing.T) response {
			return c.upload(t, "image", "empty.png", "image/png", nil)
		}, http.StatusBadRequest},
		{"not-multipart", func(t *testing.T) response {
			return c.do(t, http.MethodPost, "/images", "image/png", pngData)
		}, http.StatusBadRequest},
		{"over-limit", func(t *testing.T) response {
			return c.upload(t, "image", "big.png", "image/png", overLimit)
		}, http.StatusRequestEntityTooLarge},
		{"unknown-id", func(t *testing.T) response { return c.get(t, "/images/987654321") }, http.StatusNotFound},
		{"unknown-id-thumbnail", func(t *testing.T) response {
			return c.get(t, "/images/987654321/thumbnail")
		}, http.StatusNotFound},
		{"id-word", func(t *testing.T) response { return c.get(t, "/images/abc") }, http.StatusBadRequest},
		{"id-zero", func(t *testing.T) response { return c.get(t, "/images/0") }, http.StatusBadRequest},
		{"id-negative", func(t *testing.T) response { return c.get(t, "/images/-3") }, http.StatusBadRequest},
		{"id-fraction", func(t *testing.T) response { return c.get(t, "/images/1.5/thumbnail") }, http.StatusBadRequest},
		{"id-overflow", func(t *testing.T) response {
			return c.get(t, "/images/99999999999999999999")
		}, http.StatusBadRequest},
	} {
		t.Run(bad.name, func(t *testing.T) {
			resp := bad.send(t)
			wantStatus(t, resp, bad.status)
			wantTimings(t, resp, "handler")
			var e struct {
				Error string `json:"error"`
			}
			if err := json.Unmarshal(resp.body, &e); err != nil || e.Error == "" {
				t.Errorf(`body %q, want {"error": "<reason>"}`, resp.body)
			}
		})
	}
	if after := countRows(ctx, t, db); after != rowsBefore {
		t.Errorf("%d rows after the failed uploads, %d before", after, rowsBefore)
	}

	t.Run("still-serving", func(t *testing.T) {
		wantStatus(t, c.get(t, "/healthz"), http.StatusOK)
		resp := c.upload(t, "image", "again.jpg", "image/jpeg", jpegData)
		wantStatus(t, resp, http.StatusCreated)
		if n := countRows(ctx, t, db); n != rowsBefore+1 {
			t.Errorf("%d rows after one more upload, want %d", n, rowsBefore+1)
		}
	})
}

func countRows(ctx context.Context, t *testing.T, db *pgx.Conn) int {
	t.Helper()
	var n int
	if err := db.QueryRow(ctx, "SELECT count(*) FROM images").Scan(&n); err != nil {
		t.Fatalf("count images: %v", err)
	}
	return n
}

// client talks to one service.
type client struct {
	base string
}

type response struct {
	status int
	header http.Header
	body   []byte
}

func (c client) get(t *testing.T, path string) response {
	return c.do(t, http.MethodGet, path, "", nil)
}

// upload POSTs a multipart form with one file part.
func (c client) upload(t *testing.T, field, filename, contentType string, data []byte) response {
	t.Helper()
	var body bytes.Buffer
	w := multipart.NewWriter(&body)
	h := make(map[string][]string)
	h["Content-Disposition"] = []string{fmt.Sprintf(`form-data; name=%q; filename=%q`, field, filename)}
	h["Content-Type"] = []string{contentType}
	part, err := w.CreatePart(h)
	if err != nil {
		t.Fatal(err)
	}
	part.Write(data)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return c.do(t, http.MethodPost, "/images", w.FormDataContentType(), body.Bytes())
}

func (c client) do(t *testing.T, method, path, contentType string, body []byte) response {
	t.Helper()
	req, err := http.NewRequest(method, c.base+path, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: read answer: %v", method, path, err)
	}
	return response{status: resp.StatusCode, header: resp.Header, body: data}
}

func wantStatus(t *testing.T, r response, want int) {
	t.Helper()
	if r.status != want {
		t.Fatalf("status %d, want %d; body %.300q", r.status, want, r.body)
	}
}

// wantTimings: Server-Timing names every stage, each with a duration.
func wantTimings(t *testing.T, r response, names ...string) {
	t.Helper()
	value := r.header.Get("Server-Timing")
	metrics, malformed := servertiming.Parse(nil, []byte(value))
	if malformed > 0 {
		t.Errorf("Server-Timing %q: %d malformed entries", value, malformed)
	}
	have := map[string]bool{}
	for _, m := range metrics {
		have[string(m.Name)] = true
	}
	for _, n := range names {
		if !have[n] {
			t.Errorf("Server-Timing %q lacks %s", value, n)
		}
	}
}

// picture is a gradient with noise of the given amplitude (0 to 255).
func picture(w, h, noise int) *image.RGBA {
	rng := rand.New(rand.NewPCG(1, 2))
	m := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			n := 0
			if noise > 0 {
				n = rng.IntN(noise)
			}
			m.SetRGBA(x, y, color.RGBA{R: uint8(x*255/w + n), G: uint8(y*255/h + n/2), B: uint8(128 + n/3), A: 255})
		}
	}
	return m
}

func encodePNG(t *testing.T, m image.Image) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := png.Encode(&b, m); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func encodeJPEG(t *testing.T, m image.Image) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := jpeg.Encode(&b, m, &jpeg.Options{Quality: 90}); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func abs(n int) int { return max(n, -n) }
