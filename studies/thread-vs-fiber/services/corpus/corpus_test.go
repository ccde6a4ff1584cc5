package main

import (
	"bytes"
	"image"
	_ "image/jpeg"
	_ "image/png"
	"os"
	"path/filepath"
	"testing"
)

// TestCorpus writes the corpus as the command does and checks every file:
// its name, that it decodes as its format, and its size.
func TestCorpus(t *testing.T) {
	dir := t.TempDir()
	if err := write(dir); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if want := len(Formats) * len(Sizes); len(entries) != want {
		t.Errorf("%d files, want %d", len(entries), want)
	}
	decoderName := map[string]string{"jpg": "jpeg", "png": "png"}
	for _, f := range Formats {
		for _, size := range Sizes {
			name := FileName(f, size)
			data, err := os.ReadFile(filepath.Join(dir, name))
			if err != nil {
				t.Error(err)
				continue
			}
			if d := deviation(len(data), size); d > Tolerance {
				t.Errorf("%s: %d bytes, %.1f%% from %d", name, len(data), d*100, size)
			}
			img, got, err := image.Decode(bytes.NewReader(data))
			if err != nil {
				t.Errorf("%s: %v", name, err)
				continue
			}
			if got != decoderName[f.Name] {
				t.Errorf("%s decodes as %s", name, got)
			}
			if b := img.Bounds(); max(b.Dx(), b.Dy()) <= 128 {
				t.Errorf("%s: %dx%d, no larger than a 128 px thumbnail", name, b.Dx(), b.Dy())
			}
		}
	}
}

func TestFileName(t *testing.T) {
	for _, tc := range []struct {
		f    Format
		size int
		want string
	}{
		{Formats[1], 17 * KB, "png-0017k.png"},
		{Formats[1], 128 * KB, "png-0128k.png"},
		{Formats[0], 256 * KB, "jpg-0256k.jpg"},
		{Formats[0], 1 * MB, "jpg-1m.jpg"},
		{Formats[1], 4 * MB, "png-4m.png"},
	} {
		if got := FileName(tc.f, tc.size); got != tc.want {
			t.Errorf("FileName(%s, %d) = %s, want %s", tc.f.Name, tc.size, got, tc.want)
		}
	}
}

// TestDeterministic: the same target gives the same bytes.
func TestDeterministic(t *testing.T) {
	for _, f := range Formats {
		a, err := Generate(f, 30*KB)
		if err != nil {
			t.Fatal(err)
		}
		b, err := Generate(f, 30*KB)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a, b) {
			t.Errorf("%s: two runs differ", f.Name)
		}
	}
}
