package main

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"math"
)

// Tolerance is how far a file may be from its target size, as a fraction.
const Tolerance = 0.05

// closeEnough ends the search early; between it and Tolerance the search
// keeps looking for a closer width.
const closeEnough = 0.01

// KB and MB are decimal, as the paper's sizes are.
const (
	KB = 1000
	MB = 1000 * KB
)

// Sizes are the targets: the paper's 17 KB to 128 KB, then 256 KB to 4 MB
// for the size sweep msbench adds.
var Sizes = []int{17 * KB, 30 * KB, 40 * KB, 50 * KB, 65 * KB, 90 * KB, 110 * KB, 120 * KB, 128 * KB,
	256 * KB, 1 * MB, 4 * MB}

// Format is an output format.
type Format struct {
	Name string // file name prefix
	Ext  string
	// Grain is the noise amplitude, ± levels per channel. It sets the bytes
	// per pixel: JPEG gets camera-like grain (about 0.35 byte/pixel at quality
	// 85, so 4 MB is about a 12-megapixel photo); PNG gets ±1 dithering
	// (1.3 to 0.9 byte/pixel), which keeps even the 17 KB PNG larger than a
	// thumbnail.
	Grain  int
	encode func(*bytes.Buffer, image.Image) error
}

// jpegQuality is a typical camera or web setting; sizes are reached through
// the dimensions, not by degrading the quality.
const jpegQuality = 85

// Formats are the two formats the service accepts.
var Formats = []Format{
	{Name: "jpg", Ext: ".jpg", Grain: 30, encode: func(b *bytes.Buffer, m image.Image) error {
		return jpeg.Encode(b, m, &jpeg.Options{Quality: jpegQuality})
	}},
	{Name: "png", Ext: ".png", Grain: 1, encode: func(b *bytes.Buffer, m image.Image) error {
		return png.Encode(b, m)
	}},
}

// FileName names a corpus file: png-0128k.png, jpg-1m.jpg.
func FileName(f Format, size int) string {
	if size >= MB && size%MB == 0 {
		return fmt.Sprintf("%s-%dm%s", f.Name, size/MB, f.Ext)
	}
	return fmt.Sprintf("%s-%04dk%s", f.Name, size/KB, f.Ext)
}

// Generate returns the encoding of a deterministic 4:3 image whose size is
// within Tolerance of target. The encoded size grows with the area, so it
// searches the width: a guess from the bytes per pixel seen so far, kept
// inside the bracket of widths known to be too small and too large, with
// bisection when the guess leaves the bracket.
func Generate(f Format, target int) ([]byte, error) {
	lo, hi := 8, 16384 // widths known (or assumed) too small and too large
	w := 400
	var best []byte
	for hi-lo > 1 {
		data, err := encodeAt(f, w)
		if err != nil {
			return nil, err
		}
		if best == nil || deviation(len(data), target) < deviation(len(best), target) {
			best = data
		}
		if deviation(len(data), target) <= closeEnough {
			break
		}
		if len(data) < target {
			lo = w
		} else {
			hi = w
		}
		w = int(math.Round(float64(w) * math.Sqrt(float64(target)/float64(len(data)))))
		if w <= lo || w >= hi {
			w = (lo + hi) / 2
		}
	}
	if deviation(len(best), target) > Tolerance {
		return nil, fmt.Errorf("%s: no width gives %d bytes ±%.0f%% (closest %d bytes)",
			f.Name, target, Tolerance*100, len(best))
	}
	return best, nil
}

// deviation is |size-target| as a fraction of target.
func deviation(size, target int) float64 {
	return math.Abs(float64(size-target)) / float64(target)
}

func encodeAt(f Format, width int) ([]byte, error) {
	var buf bytes.Buffer
	if err := f.encode(&buf, Picture(width, width*3/4, f.Grain)); err != nil {
		return nil, fmt.Errorf("encode %s %dx%d: %w", f.Name, width, width*3/4, err)
	}
	return buf.Bytes(), nil
}

// Picture draws the deterministic content: smooth colour gradients, soft
// rings (edges, like a photo's subject) and seeded noise of ±grain levels
// (like sensor grain, which keeps the encoders from compressing it to
// nothing). Each pixel is a function of its position and the image size, so
// the same size always gives the same image.
func Picture(w, h, grain int) *image.RGBA {
	m := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		fy := float64(y) / float64(h)
		for x := range w {
			fx := float64(x) / float64(w)
			ring := 0.5 + 0.5*math.Sin(18*math.Hypot(fx-0.4, fy-0.55))
			n := noise(x, y)
			m.SetRGBA(x, y, color.RGBA{
				R: channel(255*fx*0.7+60*ring, n, grain),
				G: channel(255*fy*0.6+50*ring, n>>16, grain),
				B: channel(255*(1-fx)*0.5+70*ring, n>>32, grain),
				A: 255,
			})
		}
	}
	return m
}

// seed makes the noise this corpus's own; changing it changes every file.
const seed = 0x6d7362656e6368 // "msbench"

// noise is a fixed hash of seed and pixel position (SplitMix64's
// finaliser), so the grain is reproducible and independent of the order in
// which pixels are drawn.
func noise(x, y int) uint64 {
	z := seed ^ (uint64(x)<<32 | uint64(y))
	z += 0x9e3779b97f4a7c15
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

// channel adds to v a noise level in [-grain, grain] taken from the low 16
// bits of n, and clamps.
func channel(v float64, n uint64, grain int) uint8 {
	v += float64(int(n&0xffff)%(2*grain+1) - grain)
	return uint8(max(0, min(255, math.Round(v))))
}
