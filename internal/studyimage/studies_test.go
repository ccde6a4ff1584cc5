package studyimage_test

import (
	"context"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/mutate"

	"github.com/msbench/msbench/internal/image"
	"github.com/msbench/msbench/internal/image/imagetest"
	"github.com/msbench/msbench/internal/runner/deploytest"
	"github.com/msbench/msbench/internal/study"
	"github.com/msbench/msbench/internal/studyimage"
	"github.com/msbench/msbench/internal/toolchain"
)

// covered says whether one of the spec's paths holds p.
func covered(s studyimage.Spec, p string) bool {
	return slices.ContainsFunc(s.Paths, func(q studyimage.Path) bool { return studyimage.Within(p, q.Path) })
}

// commandFile is the file a service's command starts, as its plan
// resolves it.
func commandFile(t *testing.T, s *study.Study, lab *deploytest.Lab, variant string, service string) string {
	t.Helper()
	for _, v := range s.Matrix() {
		if v.Key() != variant {
			continue
		}
		vals, err := studyimage.PlanValues(s, v, lab.Values())
		if err != nil {
			t.Fatal(err)
		}
		command, err := studyimage.Expand(s.Service(service).Command, vals)
		if err != nil {
			t.Fatal(err)
		}
		return strings.Fields(command)[0]
	}
	t.Fatalf("no variant %s", variant)
	return ""
}

// open loads a study of the repository and opens its lab (its builds
// made or found in the repository's build cache).
func open(ctx context.Context, t *testing.T, name string, opts ...deploytest.OpenOption) (*study.Study, *deploytest.Lab) {
	t.Helper()
	file := filepath.Join("..", "..", "studies", name, "study.yaml")
	s, err := study.Load(file, "")
	if err != nil {
		t.Fatal(err)
	}
	return s, deploytest.Open(ctx, t, file, "", opts...)
}

// faas-gateway's services run the one Go build's binaries: every
// framework, policy and delay, the gateway and the RPC server, one image
// holding that build.
func TestPlanFaasGateway(t *testing.T) {
	s, lab := open(context.Background(), t, "faas-gateway")
	specs, err := studyimage.Plan(s, nil, lab.Values())
	if err != nil {
		t.Fatal(err)
	}
	build := lab.Values()["build.faas"]
	if len(specs) != 1 || !slices.Equal(specs[0].Paths, []studyimage.Path{{Path: build, Why: "build faas"}}) || specs[0].Packages != nil {
		t.Fatalf("images %+v, want one holding %s on the bare base", specs, build)
	}
	if got, want := len(specs[0].Uses), 2*len(s.Matrix()); got != want {
		t.Errorf("%d uses, want %d", got, want)
	}
	for _, u := range specs[0].Uses {
		if f := commandFile(t, s, lab, u.Variant, u.Service); !covered(specs[0], f) {
			t.Errorf("%s %s runs %s, which its image lacks", u.Variant, u.Service, f)
		}
	}
}

// frameworks: each framework's services run its build's run.sh, which
// needs the JDK 25 (Spring), the host's Node (Nest) or nothing more
// (Micro); those that read the dataset have it.
func TestPlanFrameworks(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds (or finds in the cache) the three frameworks' deployments")
	}
	needs := map[string]struct {
		jdk   int
		tools []string
	}{"spring": {25, []string{"mvn"}}, "nest": {0, []string{"node", "npm"}}, "micro": {0, []string{"go"}}}
	var without []string
	for _, fw := range slices.Sorted(maps.Keys(needs)) {
		if why := toolchain.Missing(needs[fw].jdk, needs[fw].tools...); why != "" {
			t.Logf("leaving out %s: this machine lacks %s", fw, why)
			without = append(without, fw)
		}
	}
	ctx := context.Background()
	s, lab := open(ctx, t, "frameworks", deploytest.WithoutBuilds(without...))
	var variants []string
	for _, v := range s.Matrix() {
		if !slices.Contains(without, v.Get("framework")) {
			variants = append(variants, v.Key())
		}
	}
	if len(variants) == 0 {
		t.Skip("no framework can be built here")
	}
	vs := slices.DeleteFunc(s.Matrix(), func(v study.Variant) bool { return !slices.Contains(variants, v.Key()) })
	specs, err := studyimage.Plan(s, vs, lab.Values())
	if err != nil {
		t.Fatal(err)
	}
	values := lab.Values()
	node, _ := exec.LookPath("node")
	jdk, _ := studyimage.FirstJDK(filepath.Join(toolchain.JVMDir, "*25*"))
	for _, v := range vs {
		fw := v.Get("framework")
		for _, svc := range s.Services {
			if !svc.RunsIn(v) {
				continue
			}
			b := studyimage.For(fakeBuilt(specs), v.Key(), svc.Name)
			if b == nil {
				t.Fatalf("%s %s: no image", v.Key(), svc.Name)
			}
			spec := b.Spec
			if f := commandFile(t, s, lab, v.Key(), svc.Name); !covered(spec, f) {
				t.Errorf("%s %s runs %s, which its image lacks (%+v)", v.Key(), svc.Name, f, spec.Paths)
			}
			if !covered(spec, values["build."+fw]) {
				t.Errorf("%s %s: image lacks build %s", v.Key(), svc.Name, fw)
			}
			if got, want := covered(spec, values["dataset.universities"]), svc.Name != "gateway"; got != want {
				t.Errorf("%s %s: holds the dataset %v, want %v", v.Key(), svc.Name, got, want)
			}
			if got := jdk != "" && covered(spec, jdk); got != (fw == "spring") {
				t.Errorf("%s %s: holds the JDK 25 %v", v.Key(), svc.Name, got)
			}
			if got := node != "" && covered(spec, node); got != (fw == "nest") {
				t.Errorf("%s %s: holds node %v", v.Key(), svc.Name, got)
			}
		}
	}
	for _, spec := range specs {
		t.Logf("%s: %d uses, %q", spec.Name, len(spec.Uses), studyimage.Paths(spec))
	}
}

func fakeBuilt(specs []studyimage.Spec) []studyimage.Built {
	out := make([]studyimage.Built, len(specs))
	for i, s := range specs {
		out[i] = studyimage.Built{Spec: s}
	}
	return out
}

// needsImages skips a test that builds images on the Debian base where
// debootstrap cannot run, and returns the repository's image store (a
// warm run finds the base there) and a context ending with the test, at
// most 10 minutes from now.
func needsImages(t *testing.T) (*image.Store, context.Context) {
	t.Helper()
	store := imagetest.Store(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	t.Cleanup(cancel)
	return store, ctx
}

// planAndBuild plans the variants' images and builds them, and says how
// long the build took.
func planAndBuild(ctx context.Context, t *testing.T, store *image.Store, s *study.Study, variants []study.Variant, values map[string]string) ([]studyimage.Built, time.Duration) {
	t.Helper()
	specs, err := studyimage.Plan(s, variants, values)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	built, err := studyimage.Build(ctx, store, specs)
	if err != nil {
		t.Fatal(err)
	}
	return built, time.Since(start)
}

// unpack extracts an image's file system into a new directory, as a
// runtime would.
func unpack(ctx context.Context, t *testing.T, img image.Image) string {
	t.Helper()
	rootfs := t.TempDir()
	untar := exec.CommandContext(ctx, "tar", "-x", "-C", rootfs)
	untar.Stdin = mutate.Extract(img.Image)
	if out, err := untar.CombinedOutput(); err != nil {
		t.Fatalf("unpack the image: %v\n%s", err, out)
	}
	return rootfs
}

// The "same paths" design without a cluster: faas-gateway's image,
// unpacked, runs the RPC server and the gateway by their study's commands,
// unchanged, through /bin/sh in the study's working directory, chrooted
// into the image; the gateway answers on loopback through the RPC server.
func TestFaasGatewayRunsInItsImage(t *testing.T) {
	store, ctx := needsImages(t)
	s, lab := open(ctx, t, "faas-gateway")
	built, first := planAndBuild(ctx, t, store, s, nil, lab.Values())
	again, warm := planAndBuild(ctx, t, store, s, nil, lab.Values())
	t.Logf("build: %v, again %v", first.Round(time.Millisecond), warm.Round(time.Millisecond))
	if again[0].Image.Digest != built[0].Image.Digest {
		t.Errorf("the same plan built %s, then %s", built[0].Image.Digest, again[0].Image.Digest)
	}
	if want := "msbench.local/faas-gateway-rpc:" + built[0].Image.Digest.Hex[:12]; built[0].Ref != want {
		t.Errorf("ref %s, want %s", built[0].Ref, want)
	}
	archive, err := built[0].WriteArchive(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	info, _ := os.Stat(archive)
	t.Logf("%s: %.1f MB archive", built[0].Ref, float64(info.Size())/1e6)

	rootfs := unpack(ctx, t, built[0].Image)
	v := s.Matrix()[0] // nethttp, pooled, 0ms
	vals, err := studyimage.PlanValues(s, v, lab.Values())
	if err != nil {
		t.Fatal(err)
	}
	addr := map[string]string{"rpc": freeAddr(t), "gateway": freeAddr(t)}
	for name, a := range addr {
		vals["service."+name+".addr"] = a
	}
	for _, name := range []string{"rpc", "gateway"} {
		b := studyimage.For(built, v.Key(), name)
		if b == nil || b.Image.Digest != built[0].Image.Digest {
			t.Fatalf("%s runs in %v, want the one image", name, b)
		}
		startInImage(ctx, t, rootfs, b, s.Service(name), vals, addr[name])
	}
	client := &http.Client{Timeout: 10 * time.Second}
	// The study's own check of /math: the RPC server computes π.
	body, err := getWhenUp(ctx, client, "http://"+addr["gateway"]+"/math?n=100000")
	if err != nil {
		t.Fatalf("the gateway in its image: %v", err)
	}
	if !strings.Contains(body, "3.1") {
		t.Fatalf("GET /math through the gateway in the image: %q, want π", body)
	}
}

// startInImage starts a service by its study's command, unchanged,
// through /bin/sh in the image's working directory, chrooted into rootfs
// (b unpacked), with the image's environment and the values of an
// instance on addr as the runner gives them; it is killed at the test's
// end.
func startInImage(ctx context.Context, t *testing.T, rootfs string, b *studyimage.Built, svc *study.Service, vals map[string]string, addr string) {
	t.Helper()
	cfg, err := b.Image.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	// Its {tmp} is the backend's to provide: made here inside the root.
	tmp := filepath.Join(t.TempDir(), svc.Name)
	if err := os.MkdirAll(filepath.Join(rootfs, tmp), 0o777); err != nil {
		t.Fatal(err)
	}
	inst := maps.Clone(vals)
	host, port, _ := net.SplitHostPort(addr)
	maps.Copy(inst, map[string]string{"addr": addr, "host": host, "port": port, "tmp": tmp})
	command, err := studyimage.Expand(svc.Command, inst)
	if err != nil {
		t.Fatal(err)
	}
	env := append(slices.Clone(cfg.Config.Env), "TMPDIR="+tmp)
	for _, kv := range svc.Env {
		val, err := studyimage.Expand(kv[1], inst)
		if err != nil {
			t.Fatal(err)
		}
		env = append(env, kv[0]+"="+val)
	}
	cmd := inImage(ctx, rootfs, cfg.Config.WorkingDir, env, "exec "+command)
	var log strings.Builder
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		t.Fatalf("%s in the image: %v", svc.Name, err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		if t.Failed() {
			t.Logf("%s's output:\n%s", svc.Name, log.String())
		}
	})
}

// inImage runs /bin/sh -c script as a container runtime would run it in
// the unpacked image at rootfs: chrooted, in dir, with a /proc (glibc
// finds $ORIGIN, the JDK's library path, through /proc/self/exe) mounted
// in a mount namespace of its own, which goes with the process. Each step
// execs the next, so the process is the script's.
func inImage(ctx context.Context, rootfs, dir string, env []string, script string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, "unshare", "--mount", "--propagation", "private", "--",
		"/bin/sh", "-c", `mount -t proc proc "$0/proc" && exec chroot "$0" /bin/sh -c "cd \"\$0\" && $2" "$1"`,
		rootfs, dir, script)
	cmd.Env = env
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	return cmd
}

// getWhenUp GETs url until it answers 200, for at most a minute (a busy
// machine starts a program slowly).
func getWhenUp(ctx context.Context, client *http.Client, url string) (string, error) {
	deadline := time.Now().Add(time.Minute)
	for {
		resp, err := client.Get(url)
		if err == nil {
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return string(body), nil
			}
			err = fmt.Errorf("%s: %s", resp.Status, body)
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return "", err
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// The generator image holds a static msbench that runs on scratch.
func TestGeneratorImage(t *testing.T) {
	store, ctx := needsImages(t)
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	b, err := studyimage.Generator(ctx, store, root)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s in %v", b.Ref, time.Since(start).Round(time.Millisecond))
	cfg, err := b.Image.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{studyimage.GeneratorBinary, "generate"}; !slices.Equal(cfg.Config.Entrypoint, want) {
		t.Errorf("entrypoint %q, want %q", cfg.Config.Entrypoint, want)
	}
	rootfs := unpack(ctx, t, b.Image)
	// Scratch has no shell: chroot runs the binary itself.
	cmd := exec.CommandContext(ctx, studyimage.GeneratorBinary, "generate", "--help")
	cmd.SysProcAttr = &syscall.SysProcAttr{Chroot: rootfs}
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--spec") {
		t.Fatalf("msbench generate --help on scratch: %v\n%s", err, out)
	}
}

// The runtimes an image gets from this machine run on the Debian base:
// Nest's hello by its study's command on the host's Node, listening;
// Spring's JDK 25 as its run.sh finds it (jdk.sh), printing its version.
func TestFrameworksRuntimesRunInTheirImages(t *testing.T) {
	store, ctx := needsImages(t)
	for _, tc := range []struct {
		framework string
		jdk       int
		tools     []string
	}{
		{"nest", 0, []string{"node", "npm"}},
		{"spring", 25, []string{"mvn"}},
	} {
		t.Run(tc.framework, func(t *testing.T) {
			if why := toolchain.Missing(tc.jdk, tc.tools...); why != "" {
				t.Skipf("this machine lacks %s", why)
			}
			s, lab := open(ctx, t, "frameworks")
			var v study.Variant
			for _, m := range s.Matrix() {
				if m.Get("framework") == tc.framework {
					v = m
					break
				}
			}
			built, took := planAndBuild(ctx, t, store, s, []study.Variant{v}, lab.Values())
			b := studyimage.For(built, v.Key(), "hello")
			var size int64
			layers, _ := b.Image.Layers()
			for _, l := range layers {
				n, _ := l.Size()
				size += n
			}
			t.Logf("%s: %d images in %v; hello's %s, %.1f MB compressed", v.Key(), len(built), took.Round(time.Millisecond), b.Ref, float64(size)/1e6)
			rootfs := unpack(ctx, t, b.Image)
			if tc.framework == "spring" {
				cmd := inImage(ctx, rootfs, "/", []string{"PATH=" + studyimage.BasePATH}, `. `+lab.Values()["build.spring"]+`/jdk.sh && exec "$JAVA_HOME/bin/java" -version`)
				out, err := cmd.CombinedOutput()
				if err != nil || !strings.Contains(string(out), `version "25`) {
					t.Fatalf("the JDK in the image: %v\n%s", err, out)
				}
				return
			}
			startHello(ctx, t, rootfs, b, s, v, lab)
		})
	}
}

// startHello starts the variant's hello in its image, unpacked at rootfs,
// and waits until it listens.
func startHello(ctx context.Context, t *testing.T, rootfs string, b *studyimage.Built, s *study.Study, v study.Variant, lab *deploytest.Lab) {
	t.Helper()
	vals, err := studyimage.PlanValues(s, v, lab.Values())
	if err != nil {
		t.Fatal(err)
	}
	addr := freeAddr(t)
	startInImage(ctx, t, rootfs, b, s.Service("hello"), vals, addr)
	deadline := time.Now().Add(2 * time.Minute)
	for {
		conn, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			conn.Close()
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("hello in its image did not listen on %s within 2 minutes: %v", addr, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// Nest's hello on a node base from a registry — Debian's minbase with
// this machine's node at a path of the base's own, on the base's PATH, as
// a base of the project's own making would be — runs by its study's
// command, unchanged, on the base's node: its image holds no node of the
// host's.
func TestNestOnANodeBase(t *testing.T) {
	store, ctx := needsImages(t)
	if why := toolchain.Missing(0, "node", "npm"); why != "" {
		t.Skipf("this machine lacks %s", why)
	}
	node, err := exec.LookPath("node")
	if err == nil {
		node, err = filepath.EvalSymlinks(node)
	}
	if err != nil {
		t.Fatal(err)
	}
	minbase, err := store.Debian(ctx, image.Debian{})
	if err != nil {
		t.Fatal(err)
	}
	base, err := store.Build(ctx, image.Spec{
		Base:   minbase,
		Layers: []image.Layer{{Copies: []image.Copy{{Src: node, Dest: "/opt/node/bin/node"}}}},
		Config: image.Config{Env: []string{"PATH=/opt/node/bin:" + studyimage.BasePATH}},
	})
	if err != nil {
		t.Fatal(err)
	}
	host, _ := imagetest.Registry(t)
	ref, err := name.ParseReference(host + "/node:1")
	if err != nil {
		t.Fatal(err)
	}
	if err := base.Push(ctx, ref); err != nil {
		t.Fatal(err)
	}

	s, lab := open(ctx, t, "frameworks")
	var v study.Variant
	for _, m := range s.Matrix() {
		if m.Get("framework") == "nest" {
			v = m
			break
		}
	}
	specs, err := studyimage.Plan(s, []study.Variant{v}, lab.Values())
	if err != nil {
		t.Fatal(err)
	}
	// A store of the test's own: the base's reference names a registry
	// that lives as long as the test.
	built, err := studyimage.Bases{studyimage.Node: ref.String()}.Build(ctx, &image.Store{Dir: t.TempDir()}, specs)
	if err != nil {
		t.Fatal(err)
	}
	b := studyimage.For(built, v.Key(), "hello")
	if b.Spec.Language != studyimage.Node || covered(b.Spec, node) {
		t.Fatalf("hello's image: language %s, paths %q; want node without the host's %s", b.Spec.Language, studyimage.Paths(b.Spec), node)
	}
	rootfs := unpack(ctx, t, b.Image)
	if _, err := os.Stat(filepath.Join(rootfs, node)); err == nil {
		t.Fatalf("the image holds the host's %s", node)
	}
	startHello(ctx, t, rootfs, b, s, v, lab)
}

// An image holds its working directory even when no path it copies is
// there, and two services needing the same files share one image.
func TestBuildWorkingDirAndSharing(t *testing.T) {
	store, ctx := needsImages(t)
	dir := "/msbench-studyimage-test/work"
	specs := []studyimage.Spec{{Name: "t-a", Dir: dir, Uses: []studyimage.Use{{"v", "a"}, {"v", "b"}}}}
	built, err := studyimage.Build(ctx, store, specs)
	if err != nil {
		t.Fatal(err)
	}
	if b := studyimage.For(built, "v", "b"); b == nil || b.Ref != built[0].Ref {
		t.Fatalf("b runs in %v, want %s", b, built[0].Ref)
	}
	cfg, err := built[0].Image.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Config.WorkingDir != dir {
		t.Errorf("working directory %q, want %s", cfg.Config.WorkingDir, dir)
	}
	rootfs := unpack(ctx, t, built[0].Image)
	if info, err := os.Stat(filepath.Join(rootfs, dir)); err != nil || !info.IsDir() || info.Mode().Perm() != 0o755 {
		t.Errorf("image's %s: %v, %v", dir, info, err)
	}
}
