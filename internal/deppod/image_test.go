package deppod

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/jackc/pgx/v5"

	"github.com/msbench/msbench/internal/deps"
	"github.com/msbench/msbench/internal/image"
	"github.com/msbench/msbench/internal/proc"
)

// A dependency image without a cluster: PostgreSQL's, unpacked, runs its
// entrypoint chrooted into it as a container runtime would (a /proc, and a
// /dev with the usual devices and a /dev/shm, in a mount namespace of its
// own; the password in the environment), on a loopback
// port; a client on the host logs in with the values it prints, and
// SIGTERM stops it cleanly, leaving no data directory in the image's root.
func TestPostgresRunsInItsImage(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds an image on a Debian base (debootstrap, minutes the first time)")
	}
	if os.Geteuid() != 0 {
		t.Skip("debootstrap and chroot need root")
	}
	if _, err := exec.LookPath("debootstrap"); err != nil {
		t.Skip("debootstrap is not installed (apt-get install debootstrap)")
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	store := &image.Store{Dir: filepath.Join(root, ".cache", "images")}
	began := time.Now()
	b, err := Build(ctx, store, root, deps.Postgres)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s built in %v", b.Ref, time.Since(began).Round(time.Millisecond))
	archive, err := b.WriteArchive(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if info, err := os.Stat(archive); err == nil {
		t.Logf("archive %.1f MB", float64(info.Size())/1e6)
	}
	cfg, err := b.Image.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{Binary, "dependency", "postgres"}; !slices.Equal(cfg.Config.Entrypoint, want) {
		t.Fatalf("entrypoint %q, want %q", cfg.Config.Entrypoint, want)
	}

	rootfs := t.TempDir()
	untar := exec.CommandContext(ctx, "tar", "-x", "-C", rootfs)
	untar.Stdin = mutate.Extract(b.Image.Image)
	if out, err := untar.CombinedOutput(); err != nil {
		t.Fatalf("unpack the image: %v\n%s", err, out)
	}
	// Until cmd/msbench/main.go registers the command, the image's
	// msbench has none to run.
	help, _ := exec.CommandContext(ctx, "chroot", rootfs, Binary, "dependency", "--help").CombinedOutput()
	if strings.Contains(string(help), `unknown command "dependency"`) {
		t.Skip("cmd/msbench/main.go does not register newDependencyCmd yet")
	}
	port, err := new(proc.PortAllocator).Next()
	if err != nil {
		t.Fatal(err)
	}
	listen := "127.0.0.1:" + strconv.Itoa(port)
	password := rand.Text()
	args := append(slices.Clone(cfg.Config.Entrypoint), "--listen", listen, "--dir", DataDir)
	// unshare execs sh, which execs chroot, which execs msbench: the
	// process is the agent, as PID 1 of a container would be.
	cmd := exec.CommandContext(ctx, "unshare", append([]string{"--mount", "--propagation", "private", "--",
		"/bin/sh", "-c", `mount -t proc proc "$0/proc" && mount -t tmpfs dev "$0/dev" &&
			for d in null zero full random urandom; do touch "$0/dev/$d" && mount --bind "/dev/$d" "$0/dev/$d" || exit; done &&
			mkdir "$0/dev/shm" && mount -t tmpfs shm "$0/dev/shm" && exec chroot "$0" "$@"`,
		rootfs}, args...)...)
	cmd.Env = append(slices.Clone(cfg.Config.Env), PasswordEnv+"="+password)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	events := make(chan Event, 1)
	go func() {
		var e Event
		if json.NewDecoder(stdout).Decode(&e) == nil {
			events <- e
		}
		close(events)
	}()
	var ready Event
	select {
	case e, ok := <-events:
		if !ok {
			t.Fatalf("the agent in the image printed no event; stderr:\n%s", &stderr)
		}
		ready = e
	case <-time.After(3 * time.Minute):
		t.Fatalf("not ready within 3 minutes; stderr:\n%s", &stderr)
	}
	t.Logf("ready in the image in %.1fs: %v", ready.Seconds, ready.Values)
	conn, err := pgx.Connect(ctx, ready.Resolve(password)["url"])
	if err != nil {
		t.Fatalf("connect to the PostgreSQL in the image: %v", err)
	}
	var version string
	err = conn.QueryRow(ctx, "SHOW server_version").Scan(&version)
	conn.Close(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("PostgreSQL %s", version)
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("after SIGTERM: %v; stderr:\n%s", err, &stderr)
		}
	case <-time.After(30 * time.Second): // a pod's default grace period
		t.Fatalf("still running 30 s after SIGTERM; stderr:\n%s", &stderr)
	}
	if _, err := os.Stat(filepath.Join(rootfs, DataDir)); !os.IsNotExist(err) {
		t.Errorf("%s is left in the image's root: %v", DataDir, err)
	}
}

func TestArgs(t *testing.T) {
	want := []string{"--listen", "$(POD_IP):5432", "--dir", DataDir}
	if got := Args(5432); !slices.Equal(got, want) {
		t.Errorf("Args = %q, want %q", got, want)
	}
}
