package image

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/v1/mutate"
)

func TestAptMirror(t *testing.T) {
	cases := []struct {
		name    string
		list    string
		sources map[string]string
		want    string
	}{
		{"one-line", "# comment\ndeb-src http://src.example/debian bookworm main\ndeb http://one.example/debian bookworm main\n", nil, "http://one.example/debian"},
		{"one-line with options", "deb [arch=amd64 signed-by=/k.gpg] http://opt.example/debian bookworm main contrib\n", nil, "http://opt.example/debian"},
		{"another suite first", "deb http://old.example/debian bullseye main\ndeb http://new.example/debian bookworm main\n", nil, "http://new.example/debian"},
		{"deb822", "", map[string]string{"debian.sources": "Types: deb\n# http://snapshot.example/\nURIs: http://deb.example/debian\nSuites: bookworm bookworm-updates\nComponents: main\n\nTypes: deb\nURIs: http://sec.example/debian-security\nSuites: bookworm-security\n"}, "http://deb.example/debian"},
		{"deb822 source-only stanza skipped", "", map[string]string{"a.sources": "Types: deb-src\nURIs: http://src.example/debian\nSuites: bookworm\n\nTypes: deb\nURIs: http://bin.example/debian\nSuites: bookworm\n"}, "http://bin.example/debian"},
		{"none", "deb http://old.example/debian bullseye main\n", map[string]string{"x.sources": "Types: deb\nURIs: http://sec.example/\nSuites: bookworm-security\n"}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			list := filepath.Join(dir, "sources.list")
			if err := os.WriteFile(list, []byte(c.list), 0o644); err != nil {
				t.Fatal(err)
			}
			d := filepath.Join(dir, "sources.list.d")
			if err := os.Mkdir(d, 0o755); err != nil {
				t.Fatal(err)
			}
			for name, content := range c.sources {
				if err := os.WriteFile(filepath.Join(d, name), []byte(content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			got, err := aptMirror("bookworm", list, d)
			if c.want == "" {
				if err == nil {
					t.Fatalf("found %q where there is no source", got)
				}
				return
			}
			if err != nil || got != c.want {
				t.Fatalf("mirror %q, %v; want %q", got, err, c.want)
			}
		})
	}
}

// fakeDebootstrap stands in for debootstrap: it makes a tiny root file
// system (with a downloaded package left in apt's cache, as the real one
// does) and logs each call's arguments.
func fakeDebootstrap(t *testing.T) (calls func() []string) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("Store.Debian runs debootstrap in a mount namespace of its own, which needs root")
	}
	dir := t.TempDir()
	logFile := filepath.Join(dir, "calls")
	script := filepath.Join(dir, "debootstrap")
	err := os.WriteFile(script, []byte(`#!/bin/sh
echo "$*" >> `+logFile+`
for a; do root=$prev; prev=$a; done
mkdir -p $root/bin $root/etc $root/var/cache/apt/archives
echo sh > $root/bin/sh
chmod 755 $root/bin/sh
echo "$*" > $root/etc/made-by
touch $root/var/cache/apt/archives/bash_5.2_amd64.deb
`), 0o755)
	if err != nil {
		t.Fatal(err)
	}
	old := debootstrap
	debootstrap = script
	t.Cleanup(func() { debootstrap = old })
	return func() []string {
		data, _ := os.ReadFile(logFile)
		return strings.Fields(strings.ReplaceAll(strings.TrimSpace(string(data)), " ", "|"))
	}
}

func TestDebianBaseIsBuiltOnceAndCached(t *testing.T) {
	calls := fakeDebootstrap(t)
	store := &Store{Dir: t.TempDir()}
	ctx := context.Background()
	python := Debian{Packages: []string{"python3", "ca-certificates"}, Mirror: "http://mirror.invalid/debian"}
	first, err := store.Debian(ctx, python)
	if err != nil {
		t.Fatal(err)
	}
	// The same description, packages in another order and from another
	// mirror: the cached base.
	again, err := store.Debian(ctx, Debian{Suite: "bookworm", Packages: []string{"ca-certificates", "python3"}, Mirror: "http://other.invalid/debian"})
	if err != nil {
		t.Fatal(err)
	}
	if got := calls(); len(got) != 1 {
		t.Fatalf("debootstrap ran %d times for one description: %q", len(got), got)
	}
	want := "--variant=minbase|--include=ca-certificates,python3|bookworm|"
	if got := calls()[0]; !strings.HasPrefix(got, want) || !strings.HasSuffix(got, "/rootfs|http://mirror.invalid/debian") {
		t.Fatalf("debootstrap %s, want %s…/rootfs|http://mirror.invalid/debian", got, want)
	}
	d1, _ := first.Digest()
	d2, _ := again.Digest()
	if d1 != d2 {
		t.Fatalf("cached base %s, first %s", d2, d1)
	}

	layers, err := first.Layers()
	if err != nil || len(layers) != 1 {
		t.Fatalf("%d layers, %v", len(layers), err)
	}
	files := layerEntries(t, layers[0])
	if files["bin/sh"].Mode != 0o755 || files["etc/made-by"].Content == "" {
		t.Errorf("root file system lacks what debootstrap made: %v", files)
	}
	if _, ok := files["var/cache/apt/archives/bash_5.2_amd64.deb"]; ok {
		t.Error("the downloaded packages were kept in the image")
	}
	cfg, err := first.ConfigFile()
	if err != nil || len(cfg.Config.Env) != 1 || !strings.HasPrefix(cfg.Config.Env[0], "PATH=") {
		t.Errorf("base env %v, %v: want a PATH", cfg.Config.Env, err)
	}

	if _, err := store.Debian(ctx, Debian{Packages: []string{"nodejs"}, Mirror: "http://mirror.invalid/debian"}); err != nil {
		t.Fatal(err)
	}
	if got := calls(); len(got) != 2 {
		t.Fatalf("another package list was taken from the cache: calls %q", got)
	}
	if leftovers, _ := filepath.Glob(filepath.Join(store.Dir, "*", ".tmp*")); len(leftovers) > 0 {
		t.Errorf("left behind %v", leftovers)
	}
}

func TestDebianFailureCachesNothing(t *testing.T) {
	fakeDebootstrap(t)
	dir := t.TempDir()
	failing := filepath.Join(dir, "debootstrap")
	if err := os.WriteFile(failing, []byte("#!/bin/sh\necho 'E: Failed getting release file' >&2\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	debootstrap = failing
	store := &Store{Dir: t.TempDir()}
	_, err := store.Debian(context.Background(), Debian{Mirror: "http://mirror.invalid/debian"})
	if err == nil || !strings.Contains(err.Error(), "Failed getting release file") {
		t.Fatalf("err = %v, want debootstrap's message", err)
	}
	if left, _ := os.ReadDir(store.Dir); len(left) != 0 {
		t.Fatalf("a failed bootstrap left %v", left)
	}
}

func TestDebianCancelledKillsDebootstrap(t *testing.T) {
	fakeDebootstrap(t)
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "child")
	hanging := filepath.Join(dir, "debootstrap")
	// A child of its own, as debootstrap's dpkg and wget are: cancelling
	// must reach it too, not only the script.
	script := "#!/bin/sh\nsleep 600 &\necho $! > " + pidFile + "\nwait\n"
	if err := os.WriteFile(hanging, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	debootstrap = hanging
	store := &Store{Dir: t.TempDir()}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := store.Debian(ctx, Debian{Mirror: "http://mirror.invalid/debian"})
		done <- err
	}()
	// Wait until the child runs, however slowly the machine starts it.
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if data, err := os.ReadFile(pidFile); err == nil && strings.HasSuffix(string(data), "\n") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the fake debootstrap did not start its child within 30 s")
		}
	}
	cancel()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("a cancelled bootstrap returned a base")
		}
	case <-time.After(60 * time.Second):
		t.Fatal("Debian did not return within 60 s of its context's end")
	}
	data, _ := os.ReadFile(pidFile)
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil {
		t.Fatal(err)
	}
	// Killed, then reaped by init: give it a moment on a busy machine.
	for deadline := time.Now().Add(30 * time.Second); syscall.Kill(pid, 0) == nil; time.Sleep(50 * time.Millisecond) {
		if stat, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)); strings.Contains(string(stat), ") Z ") {
			break
		}
		if time.Now().After(deadline) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("debootstrap's child %d outlived the cancelled bootstrap", pid)
		}
	}
	if left, _ := os.ReadDir(store.Dir); len(left) != 0 {
		t.Fatalf("a cancelled bootstrap left %v", left)
	}
}

// TestDebianBaseFromTheMirror runs the real debootstrap against this
// machine's apt mirror (once: the base stays in the build cache), builds a
// Python image on it and runs the image's python3.
func TestDebianBaseFromTheMirror(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: debootstrap downloads and installs a Debian system (about a minute)")
	}
	if os.Geteuid() != 0 {
		t.Skip("debootstrap needs root")
	}
	if _, err := exec.LookPath("debootstrap"); err != nil {
		t.Skip("debootstrap is not installed (apt-get install debootstrap)")
	}
	mirror, err := aptMirror("bookworm", "/etc/apt/sources.list", "/etc/apt/sources.list.d")
	if err != nil {
		t.Skipf("no apt mirror for bookworm: %v", err)
	}
	client := &http.Client{Timeout: 10 * time.Second}
	resp, err := client.Head(strings.TrimSuffix(mirror, "/") + "/dists/bookworm/Release")
	if err != nil {
		t.Skipf("apt mirror %s unreachable: %v", mirror, err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Skipf("apt mirror %s: %s", mirror, resp.Status)
	}

	// The repository's build cache, as msbench uses it: a warm run finds
	// the base there (the build-once logic is TestDebianBaseIsBuiltOnceAndCached's).
	dir, err := filepath.Abs(filepath.Join("..", "..", ".cache", "images"))
	if err != nil {
		t.Fatal(err)
	}
	store := &Store{Dir: dir}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	python := Debian{Packages: PythonPackages}
	start := time.Now()
	base, err := store.Debian(ctx, python)
	if err != nil {
		t.Fatal(err)
	}
	cold := time.Since(start)
	start = time.Now()
	if _, err := store.Debian(ctx, python); err != nil {
		t.Fatal(err)
	}
	warm := time.Since(start)
	layers, _ := base.Layers()
	compressed, _ := layers[0].Size()
	t.Logf("debian base %v: first call %v, second %v, layer %.1f MB compressed",
		python.Packages, cold.Round(time.Millisecond), warm.Round(time.Millisecond), float64(compressed)/1e6)

	img, err := store.Build(ctx, Spec{
		Base:   base,
		Layers: []Layer{appLayer(tree(t, map[string]string{"main.py": "print('hi')\n"}))},
		Config: Config{Entrypoint: []string{"python3", "/app/main.py"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if mounts, _ := os.ReadFile("/proc/self/mountinfo"); strings.Contains(string(mounts), store.Dir) {
		t.Errorf("debootstrap left mounts under %s", store.Dir)
	}

	// The image's file system runs its entrypoint: unpacked as a runtime
	// would (tar keeps owners, modes and links), entered with chroot.
	rootfs := t.TempDir()
	untar := exec.CommandContext(ctx, "tar", "-x", "-C", rootfs)
	untar.Stdin = mutate.Extract(img.Image)
	if out, err := untar.CombinedOutput(); err != nil {
		t.Fatalf("unpack the image: %v\n%s", err, out)
	}
	for _, want := range []string{"etc/ssl/certs/ca-certificates.crt", "usr/bin/sh", "bin/sh", "app/main.py"} {
		if _, err := os.Stat(filepath.Join(rootfs, want)); err != nil {
			t.Errorf("image lacks %s: %v", want, err)
		}
	}
	out, err := exec.CommandContext(ctx, "chroot", rootfs, "python3", "/app/main.py").CombinedOutput()
	if err != nil || string(out) != "hi\n" {
		t.Fatalf("python3 in the image: %q, %v", out, err)
	}
}
