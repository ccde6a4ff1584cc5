// Package cluster runs a real single-node Kubernetes on this machine, for
// the Kubernetes backend's tests and for trying a study on a cluster:
// etcd, the API server, controller manager, scheduler, kubelet and
// kube-proxy (built from the pinned module in internal/cluster/kube),
// containerd, runc and the CNI plugins from Debian, all in a network
// namespace of its own. The API is reached from the machine through a
// forwarder on 127.0.0.1; Down leaves the machine as Up found it.
//
// The cluster outlives the process that started it: its daemons run in
// sessions of their own, and its state file says what Down must stop and
// undo, also after an Up that was killed half-way (SweepDead, and the
// next Up, take that down).
//
// The Kubernetes backend and its tests use it so:
//
//	c, err := cluster.Up(ctx, cluster.Options{Log: os.Stderr}) // or cluster.Open(cluster.DefaultStateDir())
//	// an image archive from image.Image.WriteArchive, then pods with
//	// imagePullPolicy Never name it
//	err = c.ImportImage(ctx, "gateway.tar")
//	cfg, err := clientcmd.BuildConfigFromFlags("", c.Kubeconfig())
//	// pod IPs and Services' ClusterIPs are reachable from inside the
//	// cluster's namespace only
//	client := &http.Client{Transport: &http.Transport{DialContext: c.DialContext}}
//	err = c.Down(ctx)
//
// A Service's ClusterIP reaches its pods, from pods and from the cluster's
// namespace (DialContext), through kube-proxy's rules there; it stays the
// same while the pods behind it are replaced. There is no DNS: a pod is
// told the ClusterIP itself.
//
// One cluster runs on a machine at a time (the kubelet's kubepods
// cgroups are global).
package cluster

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/msbench/msbench/internal/checkout"
	"github.com/msbench/msbench/internal/proc"
	"github.com/msbench/msbench/internal/proc/procfs"
)

// Options says where a cluster keeps its files.
type Options struct {
	// StateDir holds everything of one cluster (certificates, configs,
	// etcd's and containerd's data, logs); DefaultStateDir when empty.
	StateDir string
	// Source is the msbench checkout the components are built from; the
	// one around the working directory when empty.
	Source string
	// CacheDir keeps the built components between clusters;
	// DefaultCacheDir when empty.
	CacheDir string
	// Netns names the cluster's network namespace; "msbench-kube" when
	// empty.
	Netns string
	// Log receives progress lines; none when nil.
	Log io.Writer
	// WaitForMachine is how long Up waits for another cluster on this
	// machine to be taken down (one runs at a time) before it fails with
	// ErrBusy; zero fails at once.
	WaitForMachine time.Duration
}

// DefaultStateDir is where a cluster lives unless told otherwise.
// Its parent exists on every system, so Down, removing it, leaves none of
// its path behind.
func DefaultStateDir() string { return "/var/lib/msbench-cluster" }

// DefaultCacheDir is where built components are kept unless told
// otherwise.
func DefaultCacheDir() string {
	dir, err := os.UserCacheDir()
	if err != nil {
		dir = os.TempDir()
	}
	return filepath.Join(dir, "msbench", "cluster")
}

// Cluster is a running cluster.
type Cluster struct {
	l  layout
	st state
}

// Kubeconfig is the path of a kubeconfig with cluster-admin rights,
// reaching the API through the forwarder on 127.0.0.1.
func (c *Cluster) Kubeconfig() string { return c.l.externalKubeconfig() }

// Netns is the name of the cluster's network namespace (under /run/netns),
// where pod IPs are reachable.
func (c *Cluster) Netns() string { return c.st.Netns }

// StateDir is the cluster's state directory.
func (c *Cluster) StateDir() string { return c.l.dir }

// DialContext dials addr (e.g. a pod's IP and port) from inside the
// cluster's network namespace.
func (c *Cluster) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	return dialIn(ctx, c.st.Netns, network, addr)
}

// ImportImage imports an OCI image archive (e.g. one written by
// image.Image.WriteArchive) into the cluster's containerd, where pods with
// imagePullPolicy Never find it by the name the archive gives.
func (c *Cluster) ImportImage(ctx context.Context, archive string) error {
	return importImage(ctx, c.l, archive)
}

func importImage(ctx context.Context, l layout, archive string) error {
	if err := run(ctx, "ctr", "--address", l.containerdSocket(), "-n", "k8s.io", "images", "import", archive); err != nil {
		return fmt.Errorf("import image %s: %w", archive, err)
	}
	return nil
}

// RemoveImages removes from the cluster's containerd every image whose
// name begins with prefix (a run's, e.g. msbench.local/NAMESPACE/), and
// returns their names; their layers go with containerd's collection of
// what no image holds.
func (c *Cluster) RemoveImages(ctx context.Context, prefix string) ([]string, error) {
	if prefix == "" {
		return nil, errors.New("remove images: no prefix: every image would go")
	}
	names, err := c.Images(ctx, prefix)
	if err != nil || len(names) == 0 {
		return nil, err
	}
	if err := run(ctx, "ctr", append([]string{"--address", c.l.containerdSocket(), "-n", "k8s.io", "images", "rm", "--sync"}, names...)...); err != nil {
		return nil, fmt.Errorf("remove images: %w", err)
	}
	return names, nil
}

// Images lists the names of the cluster's images that begin with prefix.
func (c *Cluster) Images(ctx context.Context, prefix string) ([]string, error) {
	out, err := exec.CommandContext(ctx, "ctr", "--address", c.l.containerdSocket(), "-n", "k8s.io", "images", "ls", "-q").Output()
	if err != nil {
		return nil, fmt.Errorf("list images: %w", err)
	}
	var names []string
	for _, name := range strings.Fields(string(out)) {
		if strings.HasPrefix(name, prefix) {
			names = append(names, name)
		}
	}
	return names, nil
}

// Down stops the cluster and undoes what Up did.
func (c *Cluster) Down(ctx context.Context) error { return Down(ctx, c.l.dir) }

// Open returns the cluster whose state is in stateDir, which must be
// ready.
func Open(stateDir string) (*Cluster, error) {
	l, err := stateLayout(stateDir)
	if err != nil {
		return nil, err
	}
	st, err := readState(l)
	if noState(err) {
		return nil, fmt.Errorf("no cluster in %s: start one with msbench cluster up", stateDir)
	}
	if err != nil {
		return nil, err
	}
	if !st.Ready {
		return nil, fmt.Errorf("the cluster in %s is not ready (still starting, or its start died: msbench cluster down removes it)", stateDir)
	}
	return &Cluster{l: l, st: st}, nil
}

// Debian packages the cluster runs, by a file each installs.
var packages = []struct{ file, pkg string }{
	{"/usr/bin/etcd", "etcd-server"},
	{"/usr/bin/containerd", "containerd"},
	{"/usr/bin/ctr", "containerd"},
	{"/usr/sbin/runc", "runc"},
	{cniBinDir + "/bridge", "containernetworking-plugins"},
	{cniBinDir + "/host-local", "containernetworking-plugins"},
	{cniBinDir + "/loopback", "containernetworking-plugins"},
	{"/usr/sbin/iptables", "iptables"},
	// kube-proxy deletes a UDP Service's stale conntrack entries with it.
	{"/usr/sbin/conntrack", "conntrack"},
	{"/usr/bin/socat", "socat"},
	{"/usr/bin/nsenter", "util-linux"},
	{"/usr/bin/ip", "iproute2"},
}

// MissingPackages lists the needed Debian packages that are not installed.
func MissingPackages() []string {
	var missing []string
	for _, p := range packages {
		if _, err := os.Stat(p.file); err != nil && (len(missing) == 0 || missing[len(missing)-1] != p.pkg) {
			missing = append(missing, p.pkg)
		}
	}
	return missing
}

// Up starts a cluster and returns once its node is Ready. On failure it
// takes down what it started.
func Up(ctx context.Context, o Options) (*Cluster, error) {
	if os.Geteuid() != 0 {
		return nil, errors.New("a local cluster needs root (network namespaces, mounts, cgroups)")
	}
	if missing := MissingPackages(); len(missing) > 0 {
		return nil, fmt.Errorf("the local cluster needs Debian packages that are not installed: install them with scripts/install-deps %s", strings.Join(missing, " "))
	}
	if o.StateDir == "" {
		o.StateDir = DefaultStateDir()
	}
	if o.CacheDir == "" {
		o.CacheDir = DefaultCacheDir()
	}
	if o.Netns == "" {
		o.Netns = "msbench-kube"
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
	source, err := checkout.Root(o.Source)
	if err != nil {
		return nil, err
	}
	l, err := stateLayout(o.StateDir)
	if err != nil {
		return nil, err
	}
	if strings.ContainsAny(l.dir, " \t\n\\") {
		return nil, fmt.Errorf("state directory %q: a path with blanks or backslashes is not supported", l.dir)
	}
	if err := l.checkSockets(); err != nil {
		return nil, err
	}
	swept, err := SweepDead(ctx, l.dir)
	if err != nil {
		return nil, fmt.Errorf("taking down what a killed cluster up left: %w", err)
	}
	if swept {
		fmt.Fprintln(o.Log, "took down what a killed cluster up had left")
	}
	if _, err := readState(l); !noState(err) {
		return nil, fmt.Errorf("a cluster is already in %s (up, or still starting): run msbench cluster down first", l.dir)
	}
	// The builds come first: they take minutes when cold and hold nothing
	// that needs undoing.
	kube, err := kubeBinary(ctx, source, o.CacheDir, o.Log)
	if err != nil {
		return nil, err
	}
	pause, err := pauseArchive(ctx, source, o.CacheDir, o.Log)
	if err != nil {
		return nil, err
	}
	if err := claimMachine(ctx, l.dir, o.WaitForMachine); err != nil {
		return nil, err
	}
	if err := machineClear(o.Netns); err != nil {
		return nil, errors.Join(err, releaseMachine(l.dir))
	}
	c := &Cluster{l: l}
	if err := c.start(ctx, o, kube, pause); err != nil {
		if derr := Down(context.WithoutCancel(ctx), l.dir); derr != nil && !errors.Is(derr, ErrNoCluster) {
			err = fmt.Errorf("%w (and taking down what had started: %v)", err, derr)
		}
		if rerr := releaseMachine(l.dir); rerr != nil {
			err = fmt.Errorf("%w (and %v)", err, rerr)
		}
		return nil, err
	}
	return c, nil
}

// machineClear checks that nothing but an msbench cluster would clash
// with the cluster about to start: a namespace of its name, another
// kubelet's cgroups.
func machineClear(netns string) error {
	if _, err := os.Stat(netnsPath(netns)); err == nil {
		return fmt.Errorf("network namespace %s exists already: something else uses it", netns)
	}
	for _, h := range cgroupHierarchies() {
		if _, err := os.Stat(filepath.Join(h, "kubepods")); err == nil {
			return fmt.Errorf("%s exists: another kubelet runs on this machine, or left its cgroups", filepath.Join(h, "kubepods"))
		}
	}
	return nil
}

// systemPaths are paths the components create whatever their
// configuration says; those that did not exist before Up go at Down.
var systemPaths = []string{
	"/run/containerd", "/var/lib/kubelet", "/var/log/pods", "/var/log/containers",
	"/var/lib/cni", "/etc/cni", "/opt/cni", "/opt/containerd", "/var/lib/containerd",
	"/etc/kubernetes", "/run/kubernetes", netnsDir,
}

// cgroupHierarchies lists the mounted cgroup v1 hierarchies.
func cgroupHierarchies() []string {
	dirs, _ := filepath.Glob("/sys/fs/cgroup/*")
	var out []string
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "cgroup.procs")); err == nil {
			out = append(out, d)
		}
	}
	return out
}

func (c *Cluster) start(ctx context.Context, o Options, kube, pauseArchive string) error {
	l := c.l
	sysctls, err := readSysctls()
	if err != nil {
		return err
	}
	c.st = state{Owner: self(), Netns: o.Netns, Sysctls: sysctls, NetnsMounted: isMountPoint(netnsDir)}
	for _, p := range systemPaths {
		if _, err := os.Stat(p); errors.Is(err, os.ErrNotExist) {
			c.st.Created = append(c.st.Created, p)
		}
	}
	for _, h := range cgroupHierarchies() {
		c.st.Cgroups = append(c.st.Cgroups, filepath.Join(h, "kubepods"))
	}
	if c.st.APIPort, err = proc.FreePort(); err != nil {
		return err
	}
	// The state file comes first, so that Down finds whatever follows.
	if err := os.MkdirAll(l.dir, 0o700); err != nil {
		return fmt.Errorf("state directory: %w", err)
	}
	if err := writeState(l, c.st); err != nil {
		return err
	}
	for _, d := range []string{"pki", "kubeconfig", "log", "containerd", "kubelet", "cni/net.d", "cni/data"} {
		if err := os.MkdirAll(l.path(d), 0o700); err != nil {
			return fmt.Errorf("state directory: %w", err)
		}
	}
	admin, err := writeFiles(l, c.st.APIPort)
	if err != nil {
		return err
	}
	fmt.Fprintf(o.Log, "starting the cluster in network namespace %s\n", o.Netns)
	if err := createNetwork(ctx, o.Netns); err != nil {
		return err
	}
	inNS := func(ctx context.Context, network, addr string) (net.Conn, error) {
		return dialIn(ctx, o.Netns, network, addr)
	}
	cmds := components(l, kube, c.st.APIPort)
	for _, cmd := range cmds[:2] { // etcd, containerd
		if err := c.daemon(cmd); err != nil {
			return err
		}
	}
	etcdHealthy := func(ctx context.Context) error {
		return httpGet(ctx, &http.Client{Transport: &http.Transport{DialContext: inNS}}, etcdClient+"/health")
	}
	if err := c.await(ctx, "etcd", etcdHealthy); err != nil {
		return err
	}
	if err := c.await(ctx, "containerd", func(ctx context.Context) error {
		return run(ctx, "ctr", "--address", l.containerdSocket(), "version")
	}); err != nil {
		return err
	}
	if err := importImage(ctx, l, pauseArchive); err != nil {
		return err
	}
	api, err := apiClient(admin, inNS)
	if err != nil {
		return err
	}
	if err := c.daemon(cmds[2]); err != nil { // the API server
		return err
	}
	if err := c.await(ctx, "kube-apiserver", func(ctx context.Context) error {
		return httpGet(ctx, api, l.apiserverURL()+"/readyz")
	}); err != nil {
		return err
	}
	for _, cmd := range cmds[3:] {
		if err := c.daemon(cmd); err != nil {
			return err
		}
	}
	forwarded, err := apiClient(admin, (&net.Dialer{}).DialContext)
	if err != nil {
		return err
	}
	if err := c.await(ctx, "the API forwarder", func(ctx context.Context) error {
		return httpGet(ctx, forwarded, l.forwardedURL(c.st.APIPort)+"/readyz")
	}); err != nil {
		return err
	}
	if err := c.await(ctx, "node "+nodeName, func(ctx context.Context) error {
		return nodeReady(ctx, forwarded, l.forwardedURL(c.st.APIPort))
	}); err != nil {
		return err
	}
	// Its health server answers once it runs (it reports healthy while
	// it starts up, so this is no proof that rules are written): a
	// kube-proxy that cannot start fails Up here rather than leaving
	// ClusterIPs dead. A new Service's rules follow within a second or so.
	if err := c.await(ctx, "kube-proxy", func(ctx context.Context) error {
		return httpGet(ctx, &http.Client{Transport: &http.Transport{DialContext: inNS}}, "http://127.0.0.1:10256/healthz")
	}); err != nil {
		return err
	}
	c.st.Owner, c.st.Ready = process{}, true
	return writeState(l, c.st)
}

// adminCredentials are what the cluster's own checks present to the API.
type adminCredentials struct{ ca, cert, key []byte }

func apiClient(a adminCredentials, dial func(context.Context, string, string) (net.Conn, error)) (*http.Client, error) {
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(a.ca)
	cert, err := tls.X509KeyPair(a.cert, a.key)
	if err != nil {
		return nil, fmt.Errorf("administrator's certificate: %w", err)
	}
	tlsConfig := &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	return &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DialContext: dial, TLSClientConfig: tlsConfig}}, nil
}

func httpGet(ctx context.Context, client *http.Client, url string) error {
	_, err := httpGetBody(ctx, client, url)
	return err
}

func httpGetBody(ctx context.Context, client *http.Client, url string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s: %s", url, resp.Status, strings.TrimSpace(string(body)))
	}
	return body, nil
}

// nodeReady reads the node's Ready condition.
func nodeReady(ctx context.Context, client *http.Client, server string) error {
	body, err := httpGetBody(ctx, client, server+"/api/v1/nodes/"+nodeName)
	if err != nil {
		return err
	}
	var node struct {
		Status struct {
			Conditions []struct{ Type, Status, Message string }
		}
	}
	if err := json.Unmarshal(body, &node); err != nil {
		return fmt.Errorf("node %s: %w", nodeName, err)
	}
	for _, cond := range node.Status.Conditions {
		if cond.Type == "Ready" {
			if cond.Status == "True" {
				return nil
			}
			return fmt.Errorf("node not ready: %s", cond.Message)
		}
	}
	return errors.New("node has no Ready condition yet")
}

// startTimeout bounds each component's wait on a busy 2-core machine,
// where the API server alone can take half a minute.
const startTimeout = 3 * time.Minute

// await polls check until it passes, failing early when a daemon has
// died: its log's tail says why.
func (c *Cluster) await(ctx context.Context, what string, check func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, startTimeout)
	defer cancel()
	var last error
	for {
		cctx, ccancel := context.WithTimeout(ctx, 5*time.Second)
		last = check(cctx)
		ccancel()
		if last == nil {
			return nil
		}
		for _, p := range c.st.Processes {
			if !p.alive() {
				return fmt.Errorf("%s exited while waiting for %s; its log ends:\n%s", p.Name, what, proc.LogTail(c.l.log(p.Name), 20))
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for %s: %w (last: %v)", what, ctx.Err(), last)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// daemon starts argv inside the cluster's namespace, in a session of its
// own so that it outlives this process, and records it in the state file.
func (c *Cluster) daemon(d command) error {
	logf, err := os.OpenFile(c.l.log(d.name), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("%s log: %w", d.name, err)
	}
	defer logf.Close()
	argv := d.argv
	if d.inNS {
		argv = append([]string{"nsenter", "--net=" + netnsPath(c.st.Netns), "--"}, argv...)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = c.l.dir
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.Env = append(os.Environ(), "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start %s: %w", d.name, err)
	}
	// Reaped here while this process lives, by init after; how it ended
	// shows in its log and in the checks that wait for it.
	go cmd.Wait()
	p := process{Name: d.name, PID: cmd.Process.Pid}
	for i := 0; i < 100 && p.Start == 0; i++ {
		if st, err := procfs.ReadStat(p.PID); err == nil {
			p.Start = st.StartTime
		} else {
			time.Sleep(time.Millisecond)
		}
	}
	c.st.Processes = append(c.st.Processes, p)
	return writeState(c.l, c.st)
}

// command is one daemon of the cluster.
type command struct {
	name string
	argv []string
	inNS bool
}

func components(l layout, kube string, forwardPort int) []command {
	port := strconv.Itoa(apiPort)
	kc := l.kubeconfig
	return []command{
		{"etcd", []string{"etcd", "--name", "msbench", "--data-dir", l.etcdData(),
			"--listen-client-urls", etcdClient, "--advertise-client-urls", etcdClient,
			"--listen-peer-urls", etcdPeer, "--initial-advertise-peer-urls", etcdPeer,
			"--initial-cluster", "msbench=" + etcdPeer, "--log-outputs", "stderr"}, true},
		{"containerd", []string{"containerd", "--config", l.containerdConfigFile()}, true},
		{"kube-apiserver", []string{kube, "kube-apiserver",
			"--etcd-servers", etcdClient,
			"--bind-address", nodeIP, "--advertise-address", nodeIP, "--secure-port", port,
			"--service-cluster-ip-range", serviceCIDR,
			"--client-ca-file", l.pki("ca.crt"),
			"--tls-cert-file", l.pki("apiserver.crt"), "--tls-private-key-file", l.pki("apiserver.key"),
			"--kubelet-client-certificate", l.pki("apiserver-kubelet.crt"), "--kubelet-client-key", l.pki("apiserver-kubelet.key"),
			// By the node's address, not its name, which no DNS knows.
			"--kubelet-preferred-address-types", "InternalIP",
			"--service-account-key-file", l.pki("sa.pub"), "--service-account-signing-key-file", l.pki("sa.key"),
			"--service-account-issuer", "https://kubernetes.default.svc.cluster.local",
			"--authorization-mode", "Node,RBAC", "--enable-admission-plugins", "NodeRestriction",
			"--cert-dir", l.path("pki", "apiserver-generated"),
			"--profiling=false"}, true},
		{"kube-controller-manager", []string{kube, "kube-controller-manager",
			"--kubeconfig", kc("controller-manager"), "--authentication-kubeconfig", kc("controller-manager"),
			"--authorization-kubeconfig", kc("controller-manager"),
			"--service-account-private-key-file", l.pki("sa.key"), "--root-ca-file", l.pki("ca.crt"),
			"--use-service-account-credentials", "--leader-elect=false",
			"--bind-address", "127.0.0.1", "--cert-dir", l.path("pki", "controller-manager-generated"),
			"--profiling=false"}, true},
		{"kube-scheduler", []string{kube, "kube-scheduler",
			"--kubeconfig", kc("scheduler"), "--authentication-kubeconfig", kc("scheduler"),
			"--authorization-kubeconfig", kc("scheduler"),
			"--leader-elect=false", "--bind-address", "127.0.0.1",
			"--cert-dir", l.path("pki", "scheduler-generated"), "--profiling=false"}, true},
		{"kubelet", []string{kube, "kubelet",
			"--config", l.kubeletConfigFile(), "--kubeconfig", kc("kubelet"),
			"--node-ip", nodeIP, "--hostname-override", nodeName,
			"--root-dir", l.kubeletRoot(), "--cert-dir", l.path("pki", "kubelet-generated")}, true},
		{"kube-proxy", []string{kube, "kube-proxy", "--config", l.proxyConfigFile()}, true},
		// The API reaches the machine through a socket file, which both
		// namespaces see: a relay inside the cluster's namespace from the
		// socket to the API server, and one on the machine's 127.0.0.1
		// to the socket.
		{"api-relay", []string{"socat", "UNIX-LISTEN:" + l.apiSocket() + ",fork,unlink-early,mode=600",
			"TCP:" + nodeIP + ":" + port}, true},
		{"api-forwarder", []string{"socat", "TCP-LISTEN:" + strconv.Itoa(forwardPort) + ",bind=127.0.0.1,reuseaddr,fork",
			"UNIX-CONNECT:" + l.apiSocket()}, false},
	}
}
