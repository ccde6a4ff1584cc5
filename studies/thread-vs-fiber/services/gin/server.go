package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"mime/multipart"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"
)

// framingBytes is room for the multipart framing and part headers around the
// image, so an image of exactly the limit is accepted; the Spring service's
// request limit has the same allowance.
const framingBytes = 64 << 10

const badID = "id must be a positive integer"

// apiError is a failure the client caused, with its status and reason.
type apiError struct {
	status int
	reason string
}

func (e *apiError) Error() string { return e.reason }

func errUnsupported(reason string) error {
	return &apiError{status: http.StatusUnsupportedMediaType, reason: reason}
}

func errBadRequest(reason string) error {
	return &apiError{status: http.StatusBadRequest, reason: reason}
}

// createdImage is what the POST answers.
type createdImage struct {
	ID            int64  `json:"id"`
	ContentType   string `json:"content_type"`
	Size          int    `json:"size"`
	ThumbnailSize int    `json:"thumbnail_size"`
	Width         int    `json:"width"`
	Height        int    `json:"height"`
}

// limits are what one upload may cost.
type limits struct {
	maxImageBytes  int64
	maxImagePixels int64
	// bodyTimeout is how long the body may take once the headers are read.
	bodyTimeout time.Duration
}

type handlers struct {
	store *store
	limits
}

func newRouter(s *store, l limits) *gin.Engine {
	h := &handlers{store: s, limits: l}
	r := gin.New()
	// No request logger: the Spring service logs no requests either, and a
	// log line per request would be part of what is measured.
	r.Use(gin.Recovery(), serverTiming)
	// Keep every accepted upload in memory instead of spilling it to a temp
	// file, as the Spring service does.
	r.MaxMultipartMemory = l.maxImageBytes + framingBytes
	r.HandleMethodNotAllowed = true
	r.NoRoute(func(c *gin.Context) { fail(c, &apiError{http.StatusNotFound, "no such endpoint"}) })
	r.NoMethod(func(c *gin.Context) { fail(c, &apiError{http.StatusMethodNotAllowed, "method not allowed"}) })

	// Readiness only: touches no database, so it says the HTTP stack is up.
	r.GET("/healthz", func(c *gin.Context) { c.JSON(http.StatusOK, gin.H{"status": "ok"}) })
	r.POST("/images", h.upload)
	r.GET("/images/:id", func(c *gin.Context) { h.serve(c, h.store.original) })
	r.GET("/images/:id/thumbnail", func(c *gin.Context) { h.serve(c, h.store.thumbnail) })
	return r
}

// upload checks the request context before each stage: once the client has
// gone (or shutdown has cancelled the request) the rest is work for nobody.
// A stage itself is not interruptible, except the insert, which gets the
// context; the pixel limit bounds decoding and scaling.
func (h *handlers) upload(c *gin.Context) {
	ctx := c.Request.Context()
	data, err := h.readUpload(c)
	if err == nil {
		err = ctx.Err()
	}
	if err != nil {
		fail(c, err)
		return
	}
	t := requestTiming(c)

	done := t.stage("decode")
	f, img, err := decodeImage(data, h.maxImagePixels)
	done()
	if err == nil {
		err = ctx.Err()
	}
	if err != nil {
		fail(c, err)
		return
	}

	done = t.stage("process")
	thumb, err := f.encodeThumbnail(thumbnail(img))
	done()
	if err == nil {
		err = ctx.Err()
	}
	if err != nil {
		fail(c, err)
		return
	}

	b := img.Bounds()
	done = t.stage("persist")
	id, err := h.store.insert(ctx, newImage{
		contentType: f.mediaType, width: b.Dx(), height: b.Dy(), original: data, thumbnail: thumb,
	})
	done()
	if err != nil {
		fail(c, err)
		return
	}

	c.Header("Location", "/images/"+strconv.FormatInt(id, 10))
	c.JSON(http.StatusCreated, createdImage{
		ID: id, ContentType: f.mediaType, Size: len(data), ThumbnailSize: len(thumb), Width: b.Dx(), Height: b.Dy(),
	})
}

// readUpload returns the bytes of the multipart field "image", enforcing the
// limit while the body is read rather than after buffering all of it. A body
// that is not all there within bodyTimeout fails the read: 408.
func (h *handlers) readUpload(c *gin.Context) ([]byte, error) {
	tooLarge := &apiError{http.StatusRequestEntityTooLarge,
		fmt.Sprintf("upload larger than the image limit of %d bytes", h.maxImageBytes)}
	if err := http.NewResponseController(c.Writer).SetReadDeadline(time.Now().Add(h.bodyTimeout)); err != nil {
		return nil, fmt.Errorf("set body deadline: %w", err)
	}
	c.Request.Body = http.MaxBytesReader(c.Writer, c.Request.Body, h.maxImageBytes+framingBytes)
	fh, err := c.FormFile("image")
	if err == nil {
		// The multipart parser may stop before the body's end; reading to EOF
		// is what makes net/http watch the connection, so that the request
		// context ends if the client goes away during processing.
		_, err = io.Copy(io.Discard, c.Request.Body)
	}
	var maxErr *http.MaxBytesError
	var netErr net.Error
	switch {
	case errors.As(err, &maxErr):
		return nil, tooLarge
	case errors.As(err, &netErr) && netErr.Timeout():
		return nil, &apiError{http.StatusRequestTimeout, "request body not received in time: " + err.Error()}
	case errors.Is(err, http.ErrMissingFile):
		return nil, errBadRequest(`missing multipart field "image"`)
	case err != nil:
		return nil, errBadRequest("want a multipart/form-data body: " + err.Error())
	case fh.Size > h.maxImageBytes:
		return nil, tooLarge
	case fh.Size == 0:
		return nil, errBadRequest(`multipart field "image" is empty`)
	}
	return readPart(fh)
}

func readPart(fh *multipart.FileHeader) ([]byte, error) {
	f, err := fh.Open()
	if err != nil {
		return nil, fmt.Errorf("open multipart field %q: %w", fh.Filename, err)
	}
	defer f.Close()
	data, err := io.ReadAll(f)
	if err != nil {
		return nil, fmt.Errorf("read multipart field %q: %w", fh.Filename, err)
	}
	return data, nil
}

// serve answers a GET of stored bytes fetched by fetch.
func (h *handlers) serve(c *gin.Context, fetch func(context.Context, int64) (storedBytes, error)) {
	id, err := strconv.ParseInt(c.Param("id"), 10, 64)
	if err != nil || id <= 0 {
		fail(c, errBadRequest(badID))
		return
	}
	done := requestTiming(c).stage("fetch")
	b, err := fetch(c.Request.Context(), id)
	done()
	if errors.Is(err, errNoImage) {
		err = &apiError{http.StatusNotFound, fmt.Sprintf("no image %d", id)}
	}
	if err != nil {
		fail(c, err)
		return
	}
	c.Data(http.StatusOK, b.contentType, b.data)
}

// fail answers err as JSON {"error": …}: its own status for an apiError,
// 503 once the request context has ended (the client is gone or the server
// is shutting down; not logged), 500 (logged) for anything else.
func fail(c *gin.Context, err error) {
	var ae *apiError
	if errors.As(err, &ae) {
		c.JSON(ae.status, gin.H{"error": ae.reason})
		return
	}
	if ctxErr := c.Request.Context().Err(); ctxErr != nil {
		c.JSON(http.StatusServiceUnavailable, gin.H{"error": "request abandoned: " + ctxErr.Error()})
		return
	}
	log.Printf("%s %s: %v", c.Request.Method, c.Request.URL.Path, err)
	c.JSON(http.StatusInternalServerError, gin.H{"error": "internal error: " + err.Error()})
}
