package main

import (
	"bytes"
	"fmt"
	"image"
	"image/jpeg"
	"image/png"
	"io"
	"net/http"

	"golang.org/x/image/draw"
)

const (
	// thumbnailSide is the longest side of a thumbnail, in pixels.
	thumbnailSide = 128
	// jpegQuality is image/jpeg's default, spelled out because the Spring
	// service sets the same value on ImageIO's writer.
	jpegQuality = 75
)

// format is one accepted image format, recognised by its leading bytes,
// never by the content type the client claims.
type format struct {
	mediaType string
	magic     []byte
	// config reads only the header: the dimensions, before any pixel.
	config func(io.Reader) (image.Config, error)
	decode func([]byte) (image.Image, error)
	encode func(*bytes.Buffer, image.Image) error
}

var formats = []format{
	{
		mediaType: "image/png",
		magic:     []byte("\x89PNG\r\n\x1a\n"),
		config:    png.DecodeConfig,
		decode:    func(b []byte) (image.Image, error) { return png.Decode(bytes.NewReader(b)) },
		encode:    func(w *bytes.Buffer, m image.Image) error { return png.Encode(w, m) },
	},
	{
		mediaType: "image/jpeg",
		magic:     []byte{0xff, 0xd8, 0xff},
		config:    jpeg.DecodeConfig,
		decode:    func(b []byte) (image.Image, error) { return jpeg.Decode(bytes.NewReader(b)) },
		encode: func(w *bytes.Buffer, m image.Image) error {
			return jpeg.Encode(w, m, &jpeg.Options{Quality: jpegQuality})
		},
	},
}

// sniff returns the format data starts with, or nil.
func sniff(data []byte) *format {
	for i := range formats {
		if bytes.HasPrefix(data, formats[i].magic) {
			return &formats[i]
		}
	}
	return nil
}

// decodeImage checks the magic bytes and the declared dimensions, then
// decodes with that format's decoder only. The decoders allocate the whole
// image from the header's dimensions, so a small, highly compressed file can
// declare gigabytes of pixels: more than maxPixels is refused before
// decoding, 413. Bytes that are not, or do not decode as, the format: 415.
func decodeImage(data []byte, maxPixels int64) (*format, image.Image, error) {
	f := sniff(data)
	if f == nil {
		return nil, nil, errUnsupported("not a JPEG or PNG image")
	}
	cfg, err := f.config(bytes.NewReader(data))
	if err != nil {
		return nil, nil, errUnsupported(fmt.Sprintf("cannot decode %s: %v", f.mediaType, err))
	}
	if int64(cfg.Width)*int64(cfg.Height) > maxPixels {
		return nil, nil, &apiError{http.StatusRequestEntityTooLarge, fmt.Sprintf(
			"image of %dx%d pixels is larger than the limit of %d pixels", cfg.Width, cfg.Height, maxPixels)}
	}
	img, err := f.decode(data)
	if err != nil {
		return nil, nil, errUnsupported(fmt.Sprintf("cannot decode %s: %v", f.mediaType, err))
	}
	return f, img, nil
}

// thumbnail scales img so its longer side is thumbnailSide, keeping the
// aspect ratio (rounded, at least 1 px), with Catmull-Rom resampling; the
// Spring service implements the same kernel.
func thumbnail(img image.Image) *image.RGBA {
	b := img.Bounds()
	w, h := b.Dx(), b.Dy()
	tw, th := thumbnailSide, max(1, (h*thumbnailSide+w/2)/w)
	if h > w {
		tw, th = max(1, (w*thumbnailSide+h/2)/h), thumbnailSide
	}
	dst := image.NewRGBA(image.Rect(0, 0, tw, th))
	draw.CatmullRom.Scale(dst, dst.Bounds(), img, b, draw.Src, nil)
	return dst
}

// encodeThumbnail re-encodes the thumbnail in the upload's format.
func (f *format) encodeThumbnail(img image.Image) ([]byte, error) {
	var buf bytes.Buffer
	if err := f.encode(&buf, img); err != nil {
		return nil, fmt.Errorf("encode %s thumbnail: %w", f.mediaType, err)
	}
	return buf.Bytes(), nil
}
