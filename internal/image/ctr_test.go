package image

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// privateContainerd starts a containerd of the test's own — root, state
// and socket in a temporary directory, its CRI plugin off — and stops it
// and removes everything it made at the end. It returns the socket.
func privateContainerd(t *testing.T) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("containerd needs root")
	}
	if _, err := exec.LookPath("containerd"); err != nil {
		t.Skip("containerd is not installed (apt-get install containerd)")
	}
	if _, err := exec.LookPath("ctr"); err != nil {
		t.Skip("ctr is not installed (apt-get install containerd)")
	}
	// Not t.TempDir: it must outlive containerd, which the cleanup below
	// stops first (cleanups run last-registered first).
	dir, err := os.MkdirTemp("", "msbench-containerd-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		unmountUnder(t, dir)
		if err := os.RemoveAll(dir); err != nil {
			t.Errorf("remove %s: %v", dir, err)
		}
	})
	sock := filepath.Join(dir, "containerd.sock")
	config := fmt.Sprintf(`version = 2
root = %q
state = %q
disabled_plugins = ["io.containerd.grpc.v1.cri"]
[grpc]
  address = %q
[ttrpc]
  address = %q
[debug]
  address = ""
[metrics]
  address = ""
[plugins."io.containerd.internal.v1.opt"]
  path = %q
`, filepath.Join(dir, "root"), filepath.Join(dir, "state"), sock, sock+".ttrpc", filepath.Join(dir, "opt"))
	configFile := filepath.Join(dir, "config.toml")
	if err := os.WriteFile(configFile, []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	logf, err := os.Create(filepath.Join(dir, "containerd.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("containerd", "--config", configFile)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-done
		}
		logf.Close()
	})
	// Generous: containerd loads its plugins in well under a second, but
	// other builds may hold both cores.
	deadline := time.Now().Add(60 * time.Second)
	for {
		if err := exec.Command("ctr", "--address", sock, "version").Run(); err == nil {
			return sock
		}
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(logf.Name())
			t.Fatalf("containerd did not answer on %s within 60 s:\n%s", sock, log)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// unmountUnder detaches any mount containerd left below dir (a snapshot
// being unpacked when it was stopped), so that removing dir cannot reach
// into a mounted file system.
func unmountUnder(t *testing.T, dir string) {
	data, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Error(err)
		return
	}
	for _, line := range strings.Split(string(data), "\n") {
		fields := strings.Fields(line)
		if len(fields) > 4 && strings.HasPrefix(fields[4], dir+"/") {
			if err := syscall.Unmount(fields[4], syscall.MNT_DETACH); err != nil {
				t.Errorf("unmount %s: %v", fields[4], err)
			}
		}
	}
}

// TestContainerdImportsTheArchive imports an archive into a private
// containerd, as the local cluster's is fed, and checks the image it lists:
// the name given, the digest built.
func TestContainerdImportsTheArchive(t *testing.T) {
	sock := privateContainerd(t)
	store := &Store{Dir: t.TempDir()}
	img := build(t, store, Spec{
		Layers: []Layer{
			appLayer(tree(t, map[string]string{"server": "ELF", "static/index.html": "hi", "current": "->server"})),
			HostPaths(tree(t, map[string]string{"lib/tool": "x"})),
		},
		Config: Config{Entrypoint: []string{"/app/server"}, Env: []string{"PORT=8080"}},
	})
	file := filepath.Join(t.TempDir(), "gateway.tar")
	const ref = "msbench.local/gateway:t1"
	if err := img.WriteArchive(file, ref); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	ctr := func(args ...string) string {
		t.Helper()
		out, err := exec.CommandContext(ctx, "ctr", append([]string{"--address", sock, "-n", "k8s.io"}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("ctr %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	ctr("images", "import", file)
	// REF TYPE DIGEST SIZE PLATFORMS LABELS
	var listed []string
	for _, line := range strings.Split(ctr("images", "ls"), "\n")[1:] {
		if fields := strings.Fields(line); len(fields) >= 3 {
			listed = append(listed, fields[0]+" "+fields[2])
		}
	}
	want := ref + " " + img.Digest.String()
	if len(listed) != 1 || listed[0] != want {
		t.Fatalf("containerd lists %q, want [%s]", listed, want)
	}
	// Unpacked into the snapshotter, as the kubelet needs it: every layer
	// was readable and matched its diffID.
	// REF TYPE DIGEST STATUS SIZE UNPACKED
	check := strings.Split(ctr("images", "check"), "\n")
	if len(check) < 2 || !strings.HasPrefix(check[1], ref+" ") || !strings.Contains(check[1], " complete ") || !strings.HasSuffix(strings.TrimSpace(check[1]), " true") {
		t.Fatalf("ctr images check: %q, want %s complete and unpacked", check, ref)
	}
}
