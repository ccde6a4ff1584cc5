package main

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"net/http"
	"strings"
	"testing"
)

func TestSniff(t *testing.T) {
	for _, tc := range []struct {
		data []byte
		want string
	}{
		{[]byte("\x89PNG\r\n\x1a\nrest"), "image/png"},
		{[]byte{0xff, 0xd8, 0xff, 0xe0}, "image/jpeg"},
		{[]byte("GIF89a"), ""},
		{[]byte{0xff, 0xd8}, ""}, // too short to be sure
		{nil, ""},
	} {
		got := ""
		if f := sniff(tc.data); f != nil {
			got = f.mediaType
		}
		if got != tc.want {
			t.Errorf("sniff(%q) = %q, want %q", tc.data, got, tc.want)
		}
	}
}

func TestDecodeImageRejectsAs415(t *testing.T) {
	var buf bytes.Buffer
	if err := png.Encode(&buf, image.NewRGBA(image.Rect(0, 0, 4, 4))); err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{
		"text":      []byte("hello"),
		"truncated": buf.Bytes()[:buf.Len()/2],
	} {
		_, _, err := decodeImage(data, defaultMaxImagePixels)
		var ae *apiError
		if !errors.As(err, &ae) || ae.status != http.StatusUnsupportedMediaType {
			t.Errorf("%s: error %v, want a 415 apiError", name, err)
		}
	}
}

// TestDecodeImagePixelLimit: both formats are refused with 413 from their
// declared dimensions, before decoding, and pass at exactly the limit.
func TestDecodeImagePixelLimit(t *testing.T) {
	small := image.NewRGBA(image.Rect(0, 0, 40, 30))
	var pngBuf, jpegBuf bytes.Buffer
	if err := png.Encode(&pngBuf, small); err != nil {
		t.Fatal(err)
	}
	if err := jpeg.Encode(&jpegBuf, small, nil); err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{"png": pngBuf.Bytes(), "jpeg": jpegBuf.Bytes()} {
		if _, img, err := decodeImage(data, 40*30); err != nil || img.Bounds().Dx() != 40 {
			t.Errorf("%s 40x30 with a limit of 1200 pixels: %v", name, err)
		}
		want413(t, name+" 40x30 with a limit of 1199", data, 40*30-1, "40x30")
	}
	// Headers that declare 30000x30000 with no pixel data behind them:
	// decoding would fail with 415, so 413 shows nothing was decoded.
	want413(t, "png header", pngHeader(30000, 30000), defaultMaxImagePixels, "30000x30000")
	want413(t, "jpeg header", withJPEGSize(t, jpegBuf.Bytes(), 30000, 30000), defaultMaxImagePixels, "30000x30000")
}

func want413(t *testing.T, name string, data []byte, maxPixels int64, dims string) {
	t.Helper()
	_, _, err := decodeImage(data, maxPixels)
	var ae *apiError
	if !errors.As(err, &ae) || ae.status != http.StatusRequestEntityTooLarge || !strings.Contains(ae.reason, dims) {
		t.Errorf("%s: error %v, want a 413 apiError naming %s", name, err, dims)
	}
}

// pngHeader is a PNG signature and an IHDR chunk (8-bit RGB), nothing else.
func pngHeader(w, h uint32) []byte {
	chunk := []byte("IHDR")
	chunk = binary.BigEndian.AppendUint32(chunk, w)
	chunk = binary.BigEndian.AppendUint32(chunk, h)
	chunk = append(chunk, 8, 2, 0, 0, 0)
	b := append([]byte("\x89PNG\r\n\x1a\n"), 0, 0, 0, 13)
	b = append(b, chunk...)
	return binary.BigEndian.AppendUint32(b, crc32.ChecksumIEEE(chunk))
}

// withJPEGSize patches the dimensions in a baseline JPEG's SOF0 segment.
func withJPEGSize(t *testing.T, data []byte, w, h uint16) []byte {
	t.Helper()
	i := bytes.Index(data, []byte{0xff, 0xc0})
	if i < 0 {
		t.Fatal("no SOF0 marker")
	}
	b := bytes.Clone(data)
	// marker (2), length (2), precision (1), height (2), width (2)
	binary.BigEndian.PutUint16(b[i+5:], h)
	binary.BigEndian.PutUint16(b[i+7:], w)
	return b
}

func TestThumbnailKeepsAspect(t *testing.T) {
	for _, tc := range []struct{ w, h, tw, th int }{
		{640, 480, 128, 96},
		{300, 500, 77, 128},  // 76.8 rounds up
		{1000, 3, 128, 1},    // never 0 px
		{100, 100, 128, 128}, // small images are enlarged
	} {
		src := image.NewRGBA(image.Rect(0, 0, tc.w, tc.h))
		src.Set(0, 0, color.White)
		if b := thumbnail(src).Bounds(); b.Dx() != tc.tw || b.Dy() != tc.th {
			t.Errorf("%dx%d -> %dx%d, want %dx%d", tc.w, tc.h, b.Dx(), b.Dy(), tc.tw, tc.th)
		}
	}
}
