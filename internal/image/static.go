package image

import (
	"bytes"
	"context"
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// GoBinary is a Go main package to run alone on scratch.
type GoBinary struct {
	// Dir is the module directory go build runs in; Pkg the package as
	// go build takes it there (e.g. "./cmd/msbench").
	Dir, Pkg string
	// Path is where the image holds the binary, its entrypoint.
	Path string
	// Args follow Path in the entrypoint.
	Args []string
	// CACerts adds this machine's CA bundle at the same path, for a
	// binary that speaks TLS to servers it does not know the CA of.
	CACerts bool
	// Log receives go build's output; none when nil.
	Log io.Writer
}

// caCerts is the CA bundle Go's crypto/x509 reads on Debian.
const caCerts = "/etc/ssl/certs/ca-certificates.crt"

// GoStatic builds b with CGO_ENABLED=0 (scratch has no libc), -trimpath
// (the build cache then serves every checkout) and stripped, refuses it if
// it still needs a dynamic loader, and returns a FROM-scratch image of it.
// Go's build cache makes a second build a link.
func (s *Store) GoStatic(ctx context.Context, b GoBinary) (Image, error) {
	if err := os.MkdirAll(s.Dir, 0o755); err != nil {
		return Image{}, fmt.Errorf("image of %s: %w", b.Pkg, err)
	}
	tmp, err := os.MkdirTemp(s.Dir, ".build-")
	if err != nil {
		return Image{}, fmt.Errorf("image of %s: %w", b.Pkg, err)
	}
	defer os.RemoveAll(tmp)
	bin := filepath.Join(tmp, filepath.Base(b.Path))
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-ldflags=-s -w", "-o", bin, b.Pkg)
	cmd.Dir = b.Dir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOWORK=off")
	log := b.Log
	if log == nil {
		log = io.Discard
	}
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = log, io.MultiWriter(log, &stderr)
	if err := cmd.Run(); err != nil {
		return Image{}, fmt.Errorf("go build %s: %w: %s", b.Pkg, err, strings.TrimSpace(stderr.String()))
	}
	if err := CheckStatic(bin); err != nil {
		return Image{}, fmt.Errorf("image of %s: %w", b.Pkg, err)
	}
	copies := []Copy{{Src: bin, Dest: b.Path}}
	if b.CACerts {
		if _, err := os.Stat(caCerts); err == nil {
			copies = append(copies, Copy{Src: caCerts, Dest: caCerts})
		}
	}
	img, err := s.Build(ctx, Spec{
		Layers: []Layer{{Copies: copies}},
		Config: Config{Entrypoint: append([]string{b.Path}, b.Args...)},
	})
	if err != nil {
		return Image{}, fmt.Errorf("image of %s: %w", b.Pkg, err)
	}
	return img, nil
}

// CheckStatic refuses a binary that needs a dynamic loader, which scratch
// has not.
func CheckStatic(file string) error {
	f, err := elf.Open(file)
	if err != nil {
		return err
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return errors.New(file + " is dynamically linked")
		}
	}
	return nil
}
