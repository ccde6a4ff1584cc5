package function

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"

	"github.com/disintegration/imaging"
)

// ImageSize is the side of the square input image, as in the original study.
const ImageSize = 664

// ImageFile is the name of the generated input image inside the data directory.
const ImageFile = "input-664.png"

// Transformation parameters. They follow the ImageMagick chain of the
// original function: blur 0.5, multiplicative Gaussian noise, Laplacian noise,
// enhance, negate, normalize.
const (
	blurSigma       = 0.5
	gaussianSigma   = 0.10 // relative: a pixel value v becomes v*(1+0.10*N(0,1))
	laplaceScale    = 8.0  // absolute, in 8-bit levels
	normalizeBlack  = 0.02 // ImageMagick -normalize clips 2% of samples at the dark end ...
	normalizeWhite  = 0.01 // ... and 1% at the bright end
	noiseSeedFirst  = 0x5eed
	noiseSeedSecond = 0xfaa5
)

// enhanceKernel is the weight matrix of ImageMagick's -enhance. ImageMagick
// also skips neighbours of very different colour; a plain convolution with the
// same weights has the same cost shape and effect on flat areas.
var enhanceKernel = [25]float64{
	5, 8, 10, 8, 5,
	8, 20, 40, 20, 8,
	10, 40, 80, 40, 10,
	8, 20, 40, 20, 8,
	5, 8, 10, 8, 5,
}

// GenerateImage draws the input image: a banded two-way gradient, a few
// shapes and seeded speckle noise. Banding and sparse speckles keep the PNG
// small (tens of KB, like the study's 11.5 KB input) while giving the filters
// edges and noise to work on. The output is the same on every call.
func GenerateImage() *image.NRGBA {
	img := image.NewNRGBA(image.Rect(0, 0, ImageSize, ImageSize))
	for y := range ImageSize {
		for x := range ImageSize {
			img.SetNRGBA(x, y, color.NRGBA{
				R: band(x * 255 / (ImageSize - 1)),
				G: band(y * 255 / (ImageSize - 1)),
				B: band((x + y) * 255 / (2 * (ImageSize - 1))),
				A: 255,
			})
		}
	}
	fillRect(img, image.Rect(60, 80, 300, 260), color.NRGBA{R: 230, G: 40, B: 40, A: 255})
	fillRect(img, image.Rect(380, 420, 620, 600), color.NRGBA{R: 20, G: 20, B: 160, A: 255})
	fillCircle(img, 470, 190, 110, color.NRGBA{R: 250, G: 220, B: 30, A: 255})
	fillCircle(img, 190, 470, 140, color.NRGBA{R: 30, G: 150, B: 60, A: 255})
	fillCircle(img, 190, 470, 60, color.NRGBA{R: 245, G: 245, B: 245, A: 255})

	r := rand.New(rand.NewPCG(noiseSeedFirst, noiseSeedSecond))
	for range ImageSize * ImageSize / 100 {
		v := uint8(r.IntN(256))
		img.SetNRGBA(r.IntN(ImageSize), r.IntN(ImageSize), color.NRGBA{R: v, G: v, B: v, A: 255})
	}
	return img
}

// band rounds a level down to a multiple of 16 so the gradient compresses well.
func band(v int) uint8 { return uint8(v &^ 15) }

func fillRect(img *image.NRGBA, r image.Rectangle, c color.NRGBA) {
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			img.SetNRGBA(x, y, c)
		}
	}
}

func fillCircle(img *image.NRGBA, cx, cy, radius int, c color.NRGBA) {
	for y := cy - radius; y <= cy+radius; y++ {
		for x := cx - radius; x <= cx+radius; x++ {
			if dx, dy := x-cx, y-cy; dx*dx+dy*dy <= radius*radius {
				img.SetNRGBA(x, y, c)
			}
		}
	}
}

// PrepareImage makes sure dir holds the generated input image and returns its
// path. The file is rewritten only when its bytes differ from the generated
// ones, so a damaged or stale file cannot silently change the workload.
func PrepareImage(dir string) (string, error) {
	var buf bytes.Buffer
	if err := png.Encode(&buf, GenerateImage()); err != nil {
		return "", fmt.Errorf("encode input image: %w", err)
	}
	path := filepath.Join(dir, ImageFile)
	if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, buf.Bytes()) {
		return path, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("create data dir %s: %w", dir, err)
	}
	// Write then rename so a concurrent reader never sees half a file.
	tmp, err := os.CreateTemp(dir, ImageFile+".*")
	if err != nil {
		return "", fmt.Errorf("create temp image in %s: %w", dir, err)
	}
	defer os.Remove(tmp.Name()) // no-op after a successful rename
	if _, err := tmp.Write(buf.Bytes()); err != nil {
		tmp.Close()
		return "", fmt.Errorf("write %s: %w", tmp.Name(), err)
	}
	if err := tmp.Close(); err != nil {
		return "", fmt.Errorf("close %s: %w", tmp.Name(), err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return "", fmt.Errorf("rename to %s: %w", path, err)
	}
	return path, nil
}

// TransformFile reads the PNG at path, runs the transformation chain and
// returns the PNG-encoded result. The noise is seeded, so equal input gives
// equal output.
func TransformFile(path string) ([]byte, error) {
	src, err := imaging.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	img := imaging.Blur(src, blurSigma)
	r := rand.New(rand.NewPCG(noiseSeedFirst, noiseSeedSecond))
	addMultiplicativeGaussian(img, r, gaussianSigma)
	addLaplacian(img, r, laplaceScale)
	img = imaging.Convolve5x5(img, enhanceKernel, &imaging.ConvolveOptions{Normalize: true})
	img = imaging.Invert(img)
	normalize(img, normalizeBlack, normalizeWhite)

	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		return nil, fmt.Errorf("encode result: %w", err)
	}
	return buf.Bytes(), nil
}

// colourChannels calls f on every red, green and blue sample; alpha is left
// alone so noise never makes the image transparent.
func colourChannels(img *image.NRGBA, f func(v uint8) uint8) {
	for i := 0; i < len(img.Pix); i += 4 {
		img.Pix[i] = f(img.Pix[i])
		img.Pix[i+1] = f(img.Pix[i+1])
		img.Pix[i+2] = f(img.Pix[i+2])
	}
}

func addMultiplicativeGaussian(img *image.NRGBA, r *rand.Rand, sigma float64) {
	colourChannels(img, func(v uint8) uint8 {
		return clamp(float64(v) * (1 + sigma*r.NormFloat64()))
	})
}

// addLaplacian adds noise drawn from a Laplace(0, scale) distribution by
// inverting its CDF.
func addLaplacian(img *image.NRGBA, r *rand.Rand, scale float64) {
	colourChannels(img, func(v uint8) uint8 {
		u := r.Float64() - 0.5
		return clamp(float64(v) - scale*math.Copysign(math.Log1p(-2*math.Abs(u)), u))
	})
}

// normalize stretches the contrast so that the darkest black share of samples
// maps to 0 and the brightest white share to 255, like ImageMagick -normalize.
func normalize(img *image.NRGBA, black, white float64) {
	var hist [256]int
	colourChannels(img, func(v uint8) uint8 { hist[v]++; return v })
	total := 0
	for _, n := range hist {
		total += n
	}
	lo, hi := 0, 255
	for seen := 0; lo < 255 && float64(seen+hist[lo]) <= black*float64(total); lo++ {
		seen += hist[lo]
	}
	for seen := 0; hi > lo && float64(seen+hist[hi]) <= white*float64(total); hi-- {
		seen += hist[hi]
	}
	if hi <= lo {
		return // a flat image has no contrast to stretch
	}
	var lut [256]uint8
	for i := range lut {
		lut[i] = clamp(float64(i-lo) * 255 / float64(hi-lo))
	}
	colourChannels(img, func(v uint8) uint8 { return lut[v] })
}

func clamp(v float64) uint8 {
	switch {
	case v <= 0:
		return 0
	case v >= 255:
		return 255
	default:
		return uint8(v + 0.5)
	}
}
