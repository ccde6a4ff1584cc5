package image

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// A Go main package becomes a scratch image holding the static binary at
// its path (and the CA bundle when asked), its entrypoint the binary and
// its arguments; a package that does not build is an error naming it.
func TestGoStatic(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command")
	}
	mod := tree(t, map[string]string{
		"go.mod":       "module example.test/hello\n\ngo 1.22\n",
		"main.go":      "package main\n\nimport (\"fmt\"; \"os\")\n\nfunc main() { fmt.Println(\"hello\", os.Args[1:]) }\n",
		"cgo/main.go":  "package main\n\n// int one(void) { return 1; }\nimport \"C\"\n\nfunc main() { C.one() }\n",
		"none/main.go": "package main\n\nfunc main() { undefined() }\n",
	})
	_, caErr := os.Stat(caCerts)
	for _, tc := range []struct {
		name    string
		b       GoBinary
		files   []string
		wantErr string
	}{
		{"binary alone", GoBinary{Pkg: ".", Path: "/hello", Args: []string{"a"}}, []string{"hello"}, ""},
		{"with CA bundle", GoBinary{Pkg: ".", Path: "/usr/bin/hello", CACerts: true}, []string{"usr/bin/hello", strings.TrimPrefix(caCerts, "/")}, ""},
		// cgo is off, so the package has no Go files left to build.
		{"cgo only", GoBinary{Pkg: "./cgo", Path: "/cgo"}, nil, "go build ./cgo"},
		{"does not compile", GoBinary{Pkg: "./none", Path: "/none"}, nil, "undefined"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.b.Dir = mod
			store := &Store{Dir: t.TempDir()}
			img, err := store.GoStatic(context.Background(), tc.b)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one with %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			cfg, err := img.ConfigFile()
			if err != nil {
				t.Fatal(err)
			}
			if want := append([]string{tc.b.Path}, tc.b.Args...); !slices.Equal(cfg.Config.Entrypoint, want) {
				t.Errorf("entrypoint %q, want %q", cfg.Config.Entrypoint, want)
			}
			layers, err := img.Layers()
			if err != nil || len(layers) != 1 {
				t.Fatalf("layers %d (%v), want 1", len(layers), err)
			}
			entries := layerEntries(t, layers[0])
			if tc.b.CACerts && caErr != nil {
				tc.files = tc.files[:1]
			}
			for _, f := range tc.files {
				if _, ok := entries[f]; !ok {
					t.Errorf("layer has no %s: %v", f, keys(entries))
				}
			}
			// The binary from the layer runs here as it would on scratch.
			bin := filepath.Join(t.TempDir(), "bin")
			if err := os.WriteFile(bin, []byte(entries[tc.files[0]].Content), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := CheckStatic(bin); err != nil {
				t.Error(err)
			}
			out, err := exec.Command(bin, "x").CombinedOutput()
			if err != nil || string(out) != "hello [x]\n" {
				t.Errorf("the image's binary: %v: %q", err, out)
			}
		})
	}
}

func keys(m map[string]tarEntry) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// A dynamically linked program is refused for scratch.
func TestCheckStaticRefusesDynamic(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	real, err := filepath.EvalSymlinks(sh)
	if err != nil {
		t.Fatal(err)
	}
	if err := CheckStatic(real); err == nil || !strings.Contains(err.Error(), "dynamically linked") {
		t.Errorf("CheckStatic(%s) = %v, want dynamically linked", real, err)
	}
}
