package apitest

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"math/rand/v2"
	"mime/multipart"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/msbench/msbench/internal/apicheck"
	"github.com/msbench/msbench/internal/runner/deploytest"
	"github.com/msbench/msbench/internal/toolchain"
)

// testTimeout bounds the whole test, Maven build and JVM starts included.
const testTimeout = 4 * time.Minute

// TestImageServices deploys the study's three variants (Gin, Spring on
// platform threads, Spring on virtual threads), each on a Postgres of its
// own, and runs the same API checks on each.
func TestImageServices(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and starts three services and their Postgres")
	}
	// The one reason to skip Spring: everything else must build.
	var opts []deploytest.OpenOption
	noJVM := toolchain.Missing(25, "mvn")
	if noJVM != "" {
		opts = append(opts, deploytest.WithoutBuilds("spring"))
	}
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	t.Cleanup(cancel)
	lab := deploytest.Open(ctx, t, "../study.yaml", "", opts...)
	// executor: what a Spring variant says it runs requests on.
	for _, impl := range []struct{ name, executor string }{
		{"gin", ""},
		{"spring-platform", "ThreadPoolExecutor"},
		{"spring-virtual", "VirtualThreadExecutor"},
	} {
		t.Run(impl.name, func(t *testing.T) {
			if onJVM(impl.name) && noJVM != "" {
				t.Skip("skipping the Spring service, this machine lacks " + noJVM)
			}
			t.Parallel()
			svc := deploy(ctx, t, lab, impl.name)
			if svc.tomcat {
				checkExecutor(t, svc, impl.executor)
				checkTomcatWork(t, svc)
			}
			checkAPI(ctx, t, svc)
			checkHostile(t, svc)
		})
	}
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

func checkAPI(ctx context.Context, t *testing.T, svc *service) {
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
			resp := svc.upload(t, "image", "upload.bin", "application/octet-stream", up.data)
			mustStatus(t, "upload", resp, http.StatusCreated)
			apicheck.WantTimings(t, resp, "decode", "process", "persist", "handler")
			got := apicheck.Decode[created](t, resp)
			want := created{ID: got.ID, ContentType: up.mediaType, Size: len(up.data),
				ThumbnailSize: got.ThumbnailSize, Width: up.width, Height: up.height}
			if got.ID <= 0 || got.ThumbnailSize <= 0 || got != want {
				t.Errorf("answer %+v, want %+v with positive id and thumbnail_size", got, want)
			}
			if loc := resp.Header.Get("Location"); loc != "/images/"+strconv.FormatInt(got.ID, 10) {
				t.Errorf("Location %q for id %d", loc, got.ID)
			}
			id := strconv.FormatInt(got.ID, 10)

			orig := svc.get(t, "/images/"+id)
			mustStatus(t, "original", orig, http.StatusOK)
			apicheck.WantTimings(t, orig, "fetch", "handler")
			if ct := orig.Header.Get("Content-Type"); ct != up.mediaType {
				t.Errorf("original Content-Type %q, want %q", ct, up.mediaType)
			}
			if !bytes.Equal(orig.Body, up.data) {
				t.Errorf("original: %d bytes differ from the %d uploaded", len(orig.Body), len(up.data))
			}

			thumb := svc.get(t, "/images/"+id+"/thumbnail")
			mustStatus(t, "thumbnail", thumb, http.StatusOK)
			apicheck.WantTimings(t, thumb, "fetch", "handler")
			if ct := thumb.Header.Get("Content-Type"); ct != up.mediaType {
				t.Errorf("thumbnail Content-Type %q, want %q", ct, up.mediaType)
			}
			if len(thumb.Body) != got.ThumbnailSize {
				t.Errorf("thumbnail %d bytes, answer said %d", len(thumb.Body), got.ThumbnailSize)
			}
			img, format, err := image.Decode(bytes.NewReader(thumb.Body))
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

	rowsBefore := countRows(ctx, t, svc.db)
	overLimit := encodePNG(t, picture(400, 400, 255)) // noise does not compress
	if len(overLimit) <= maxImageBytes {
		t.Fatalf("over-limit image is only %d bytes", len(overLimit))
	}
	truncated := pngData[:len(pngData)/2]
	const badID = "id must be a positive integer"
	// Each bad request: its answer's status, the reason its error gives,
	// and the stages its Server-Timing names (those the request got to).
	for _, bad := range []struct {
		name   string
		send   func(*testing.T) apicheck.Response
		status int
		reason string
		stages []string
	}{
		{"text-file", func(t *testing.T) apicheck.Response {
			return svc.upload(t, "image", "notes.png", "image/png", []byte("plain text, named like an image\n"))
		}, http.StatusUnsupportedMediaType, "not a JPEG or PNG image", []string{"decode", "handler"}},
		{"truncated-png", func(t *testing.T) apicheck.Response {
			return svc.upload(t, "image", "half.png", "image/png", truncated)
		}, http.StatusUnsupportedMediaType, "cannot decode image/png", []string{"decode", "handler"}},
		{"missing-field", func(t *testing.T) apicheck.Response {
			return svc.upload(t, "picture", "a.png", "image/png", pngData)
		}, http.StatusBadRequest, `missing multipart field "image"`, []string{"handler"}},
		{"empty-file", func(t *testing.T) apicheck.Response {
			return svc.upload(t, "image", "empty.png", "image/png", nil)
		}, http.StatusBadRequest, `multipart field "image" is empty`, []string{"handler"}},
		{"not-multipart", func(t *testing.T) apicheck.Response {
			return apicheck.Call(t, http.MethodPost, svc.base+"/images", "image/png", pngData)
		}, http.StatusBadRequest, "want a multipart/form-data body", []string{"handler"}},
		{"over-limit", func(t *testing.T) apicheck.Response {
			return svc.upload(t, "image", "big.png", "image/png", overLimit)
		}, http.StatusRequestEntityTooLarge, "upload larger than the image limit of " + strconv.Itoa(maxImageBytes), []string{"handler"}},
		{"unknown-id", func(t *testing.T) apicheck.Response {
			return svc.get(t, "/images/987654321")
		}, http.StatusNotFound, "no image 987654321", []string{"fetch", "handler"}},
		{"unknown-id-thumbnail", func(t *testing.T) apicheck.Response {
			return svc.get(t, "/images/987654321/thumbnail")
		}, http.StatusNotFound, "no image 987654321", []string{"fetch", "handler"}},
		{"id-word", func(t *testing.T) apicheck.Response { return svc.get(t, "/images/abc") },
			http.StatusBadRequest, badID, []string{"handler"}},
		{"id-zero", func(t *testing.T) apicheck.Response { return svc.get(t, "/images/0") },
			http.StatusBadRequest, badID, []string{"handler"}},
		{"id-negative", func(t *testing.T) apicheck.Response { return svc.get(t, "/images/-3") },
			http.StatusBadRequest, badID, []string{"handler"}},
		{"id-fraction", func(t *testing.T) apicheck.Response { return svc.get(t, "/images/1.5/thumbnail") },
			http.StatusBadRequest, badID, []string{"handler"}},
		{"id-overflow", func(t *testing.T) apicheck.Response { return svc.get(t, "/images/99999999999999999999") },
			http.StatusBadRequest, badID, []string{"handler"}},
	} {
		t.Run(bad.name, func(t *testing.T) {
			resp := bad.send(t)
			apicheck.WantError(t, bad.name, resp, bad.status, bad.reason)
			apicheck.WantTimings(t, resp, bad.stages...)
		})
	}
	if after := countRows(ctx, t, svc.db); after != rowsBefore {
		t.Errorf("%d rows after the failed uploads, %d before", after, rowsBefore)
	}

	t.Run("still-serving", func(t *testing.T) {
		mustStatus(t, "healthz", svc.get(t, "/healthz"), http.StatusOK)
		mustStatus(t, "upload", svc.upload(t, "image", "again.jpg", "image/jpeg", jpegData), http.StatusCreated)
		if n := countRows(ctx, t, svc.db); n != rowsBefore+1 {
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

// mustStatus ends t unless r has the status want: what follows depends on
// it.
func mustStatus(t *testing.T, what string, r apicheck.Response, want int) {
	t.Helper()
	if !apicheck.WantStatus(t, what, r, want) {
		t.FailNow()
	}
}

func (s *service) get(t *testing.T, path string) apicheck.Response {
	t.Helper()
	return apicheck.Get(t, s.base+path)
}

// upload POSTs a multipart form with one file part.
func (s *service) upload(t *testing.T, field, filename, contentType string, data []byte) apicheck.Response {
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
	return apicheck.Call(t, http.MethodPost, s.base+"/images", w.FormDataContentType(), body.Bytes())
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
