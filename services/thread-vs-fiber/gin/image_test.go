package main

import (
	"bytes"
	"errors"
	"image"
	"image/color"
	"image/png"
	"net/http"
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
		_, _, err := decodeImage(data)
		var ae *apiError
		if !errors.As(err, &ae) || ae.status != http.StatusUnsupportedMediaType {
			t.Errorf("%s: error %v, want a 415 apiError", name, err)
		}
	}
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
