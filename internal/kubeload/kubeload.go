// Package kubeload runs a step's load from generator pods on a cluster
// and merges what they measured into what one local load gives: a
// summary (HDR histograms merged exactly) and the records.
//
// A Pool is N long-lived pods of the generator image, each idling
// (`msbench generate --idle`) until the runner sends it a load by exec:
// `msbench generate --spec - --out -`, its share of the step's load
// (fanout.Specs, all from one start instant) on stdin, its output back as
// a tar stream on stdout, its progress and errors on stderr. A step then
// costs no pod start. The pods run as the generators' service account
// (no API rights, no token), as an unprivileged user on a read-only root
// with an emptyDir at /tmp for the output.
//
// Usage, for a runner:
//
//	pool, err := kubeload.Start(ctx, kubeload.Config{Namespace: ns, Image: gen.Ref, Generators: 2, CPUs: 1, Networks: nets})
//	defer pool.Stop()
//	m, err := pool.Run(ctx, spec, filepath.Join(string(stepDir), "generators"), progress)
//	// m.Summary is the step's summary; m.WriteRecords(w, segment) adds its
//	// records to the step's file; m.WriteGenerators(stepDir) keeps each
//	// generator's own figures; pool.Usage(m) is each one's CPU.
//	status, header, body, err := pool.Fetch(ctx, "GET", url, nil, nil)
package kubeload

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/remotecommand"

	"github.com/msbench/msbench/internal/fanout"
	"github.com/msbench/msbench/internal/kube"
	"github.com/msbench/msbench/internal/kubehosts"
	"github.com/msbench/msbench/internal/load"
	"github.com/msbench/msbench/internal/loadspec"
	"github.com/msbench/msbench/internal/results"
	"github.com/msbench/msbench/internal/studyimage"
)

// Config is a pool of generator pods.
type Config struct {
	// Namespace is the run's; the pods live and die in it.
	Namespace *kube.Namespace
	// Image is the generator image (studyimage.Generator), on the nodes
	// already or pullable: its msbench is at studyimage.GeneratorBinary.
	Image string
	// Generators is the number of pods, at least 1.
	Generators int
	// CPUs is each pod's CPU, requested and limited alike; 0: none.
	CPUs float64
	// Node binds the pods to a node (kubehosts.Assignment.Generators: one
	// holding none of the study's hosts); "" for any.
	Node string
	// Networks are the cluster's pod and service ranges, where a target
	// may be; AllowHosts are hosts outside them that the study names.
	Networks   []netip.Prefix
	AllowHosts []string
}

// Bounds for a busy machine and a remote cluster.
const (
	readyWait = 3 * time.Minute
	stopWait  = 2 * time.Minute
	// minLead is the least time between writing the specs and their
	// start; the lead grows with what the exec round trip was seen to
	// take (see lead).
	minLead = 2 * time.Second
	// tailLines of a failed generator's stderr are given in its error.
	tailLines = 20
	component = "msbench-generator"
)

// Pool is a running set of generator pods.
type Pool struct {
	c     Config
	cs    kubernetes.Interface
	rest  *rest.Config
	pods  []string
	probe time.Duration // the slowest exec round trip seen at Start
}

// Start creates the generator pods and returns once every one is ready
// and answers an exec; on an error it deletes what it created.
func Start(ctx context.Context, c Config) (*Pool, error) {
	if c.Namespace == nil {
		return nil, errors.New("generator pods: no namespace")
	}
	if c.Generators < 1 {
		return nil, fmt.Errorf("generator pods: %d generators, want 1 or more", c.Generators)
	}
	if c.Image == "" {
		return nil, errors.New("generator pods: no image")
	}
	if c.CPUs < 0 {
		return nil, fmt.Errorf("generator pods: %v CPUs each, want 0 (no limit) or more", c.CPUs)
	}
	cfg, err := c.Namespace.Target.Config(0)
	if err != nil {
		return nil, err
	}
	p := &Pool{c: c, cs: c.Namespace.Client(), rest: cfg}
	if err := c.Namespace.CreateGeneratorAccount(ctx); err != nil && !apierrors.IsAlreadyExists(err) {
		return nil, err
	}
	for range c.Generators {
		pod, err := p.cs.CoreV1().Pods(c.Namespace.Name).Create(ctx, p.pod(), metav1.CreateOptions{})
		if err != nil {
			err = fmt.Errorf("generator pod in %s: %w", c.Namespace, err)
			return nil, errors.Join(err, p.Stop())
		}
		p.pods = append(p.pods, pod.Name)
	}
	if err := p.ready(ctx); err != nil {
		return nil, errors.Join(err, p.Stop())
	}
	return p, nil
}

// Pods are the generator pods' names, generator k's at index k.
func (p *Pool) Pods() []string { return p.pods }

// pod is one generator pod's definition.
func (p *Pool) pod() *corev1.Pod {
	no, yes := false, true
	nobody := int64(65534)
	res := corev1.ResourceRequirements{}
	if p.c.CPUs > 0 {
		cpu := corev1.ResourceList{corev1.ResourceCPU: *resource.NewMilliQuantity(int64(p.c.CPUs*1000+0.5), resource.DecimalSI)}
		res.Requests, res.Limits = cpu, cpu
	}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			GenerateName: component + "-",
			Labels:       map[string]string{kube.LabelManagedBy: "msbench", "app.kubernetes.io/component": component},
		},
		Spec: corev1.PodSpec{
			ServiceAccountName:           kube.GeneratorAccount,
			AutomountServiceAccountToken: &no,
			RestartPolicy:                corev1.RestartPolicyNever,
			Affinity:                     kubehosts.Affinity(p.c.Node),
			// Idle exits at once on SIGTERM; a load in flight is bounded.
			TerminationGracePeriodSeconds: ptr(int64(5)),
			Containers: []corev1.Container{{
				Name:            "generate",
				Image:           p.c.Image,
				ImagePullPolicy: studyimage.PullPolicy(p.c.Image),
				Command:         []string{studyimage.GeneratorBinary, "generate", "--idle"},
				Env:             []corev1.EnvVar{{Name: "TMPDIR", Value: "/tmp"}},
				Resources:       res,
				VolumeMounts:    []corev1.VolumeMount{{Name: "tmp", MountPath: "/tmp"}},
				SecurityContext: &corev1.SecurityContext{
					RunAsUser:                &nobody,
					RunAsNonRoot:             &yes,
					ReadOnlyRootFilesystem:   &yes,
					AllowPrivilegeEscalation: &no,
					Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
				},
			}},
			// The output of a load, written before it is sent back.
			Volumes: []corev1.Volume{{Name: "tmp", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}},
		},
	}
}

func ptr[T any](v T) *T { return &v }

// ready waits until every pod runs, then times an exec on each, which
// also shows that exec works with the run's rights before any load.
func (p *Pool) ready(ctx context.Context) error {
	deadline := time.Now().Add(readyWait)
	for _, name := range p.pods {
		for {
			pod, err := p.cs.CoreV1().Pods(p.c.Namespace.Name).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return fmt.Errorf("generator pod %s: %w", name, err)
			}
			if podReady(pod) {
				break
			}
			if why := stuck(pod); why != "" {
				return fmt.Errorf("generator pod %s (image %s): %s", name, p.c.Image, why)
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("generator pod %s not ready after %v: %s", name, readyWait, pod.Status.Phase)
			}
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(250 * time.Millisecond):
			}
		}
	}
	var wg sync.WaitGroup
	errs := make([]error, len(p.pods))
	took := make([]time.Duration, len(p.pods))
	for i, name := range p.pods {
		wg.Add(1)
		go func() {
			defer wg.Done()
			began := time.Now()
			errs[i] = p.exec(ctx, name, []string{"--help"}, nil, func(r io.Reader) error {
				_, err := io.Copy(io.Discard, r)
				return err
			}, nil)
			took[i] = time.Since(began)
		}()
	}
	wg.Wait()
	for _, t := range took {
		p.probe = max(p.probe, t)
	}
	return errors.Join(errs...)
}

func podReady(pod *corev1.Pod) bool {
	if pod.Status.Phase != corev1.PodRunning {
		return false
	}
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// stuck says why a pod will not become ready by waiting: it ended, or
// its image cannot be had.
func stuck(pod *corev1.Pod) string {
	if pod.Status.Phase == corev1.PodFailed || pod.Status.Phase == corev1.PodSucceeded {
		return fmt.Sprintf("ended (%s): %s", pod.Status.Phase, pod.Status.Message)
	}
	for _, cs := range pod.Status.ContainerStatuses {
		if w := cs.State.Waiting; w != nil {
			switch w.Reason {
			case "ErrImagePull", "ImagePullBackOff", "ErrImageNeverPull", "InvalidImageName", "CreateContainerConfigError", "CreateContainerError", "RunContainerError":
				return w.Reason + ": " + w.Message
			}
		}
		if t := cs.State.Terminated; t != nil {
			return fmt.Sprintf("its container ended (%s, exit %d): %s", t.Reason, t.ExitCode, t.Message)
		}
	}
	return ""
}

// lead is how far ahead of now a load's start is set: every generator
// must have begun by then, its spec of size bytes sent through the API
// server, or it refuses (fanout.MaxLate). Three times the slowest exec
// seen, as the machine may be busier now.
func (p *Pool) lead(size int) time.Duration {
	const perMiB = 100 * time.Millisecond
	return max(minLead, 3*p.probe) + time.Duration(size>>20+1)*perMiB
}

// Run sends spec's load from the pool's generators, each its share, from
// one start, and returns their outputs merged (fanout.Merged): the
// step's summary, its records (WriteRecords), each generator's figures.
// The outputs are kept in work/1 … work/N, which Run creates and the
// merged records are read from: remove work once they are written.
// progress, when set, sees the generators' progress added up (requests,
// errors, rates; the elapsed time and p99 are the highest generator's).
// A generator that fails fails the Run, with its stderr's end.
func (p *Pool) Run(ctx context.Context, spec loadspec.Spec, work string, progress func(load.Snapshot)) (*fanout.Merged, error) {
	n := len(p.pods)
	specs, err := fanout.Specs(spec, n, time.Time{}, p.c.Networks, p.c.AllowHosts)
	if err != nil {
		return nil, err
	}
	size, err := json.Marshal(specs[0])
	if err != nil {
		return nil, fmt.Errorf("generator spec: %w", err)
	}
	if n > 1 {
		// One generator starts when its spec arrives: no lead to wait,
		// which every slice of an interleaved step would pay.
		start := time.Now().Add(p.lead(len(size))).Round(0)
		for k := range specs {
			specs[k].Start = start
		}
	}
	if err := os.MkdirAll(work, 0o755); err != nil {
		return nil, fmt.Errorf("generator outputs: %w", err)
	}
	dirs := make([]results.StepDir, n)
	errs := make([]error, n)
	show := combine(n, progress)
	// One generator failing fails the step: the others are stopped
	// rather than waited for.
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	var wg sync.WaitGroup
	for k := range p.pods {
		dirs[k] = results.StepDir(filepath.Join(work, fmt.Sprint(k+1)))
		wg.Add(1)
		go func() {
			defer wg.Done()
			if errs[k] = p.generate(runCtx, k, specs[k], dirs[k], func(s load.Snapshot) { show(k, s) }); errs[k] != nil {
				stop()
			}
		}()
	}
	wg.Wait()
	if ctx.Err() == nil {
		// Those stopped for another's failure say nothing of their own.
		errs = slices.DeleteFunc(errs, func(err error) bool { return errors.Is(err, context.Canceled) })
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return fanout.Read(dirs)
}

// generate runs generator k's share and unpacks its output into dir.
func (p *Pool) generate(ctx context.Context, k int, spec fanout.Spec, dir results.StepDir, progress func(load.Snapshot)) error {
	data, err := json.Marshal(spec)
	if err != nil {
		return fmt.Errorf("generator spec: %w", err)
	}
	unpack := func(r io.Reader) error { return fanout.ReadOutputs(r, dir) }
	if err := p.exec(ctx, p.pods[k], []string{"--spec", "-", "--out", "-", "--progress-json"}, data, unpack, progress); err != nil {
		return fmt.Errorf("%s (pod %s): %w", spec.Share, p.pods[k], err)
	}
	return nil
}

// exec runs `msbench generate ARGS` in pod, input (when set) on its
// stdin and its stdout read by consume. Progress lines on its stderr go
// to progress (when set); an error ends with stderr's other last lines.
//
// Its stdin stays open until consume has returned, and the command
// (generate --out -, --fetch) waits for its end before exiting: the
// container runtime can lose the end of the output of a process that
// exits at once.
func (p *Pool) exec(ctx context.Context, pod string, args []string, input []byte, consume func(io.Reader) error, progress func(load.Snapshot)) error {
	cmd := append([]string{studyimage.GeneratorBinary, "generate"}, args...)
	req := p.cs.CoreV1().RESTClient().Post().Resource("pods").Namespace(p.c.Namespace.Name).Name(pod).SubResource("exec").
		VersionedParams(&corev1.PodExecOptions{Container: "generate", Command: cmd, Stdin: input != nil, Stdout: true, Stderr: true}, scheme.ParameterCodec)
	ex, err := remotecommand.NewSPDYExecutor(p.rest, "POST", req.URL())
	if err != nil {
		return fmt.Errorf("exec in %s: %w", pod, err)
	}
	outR, outW := io.Pipe()
	received := make(chan struct{})
	consumed := make(chan error, 1)
	go func() {
		err := consume(outR)
		close(received)
		// What consume left is read to its end, or the exec would block
		// writing it.
		io.Copy(io.Discard, outR)
		consumed <- err
	}()
	var stdin io.Reader
	if input != nil {
		stdin = held{bytes.NewReader(input), received}
	}
	errR, errW := io.Pipe()
	lines := make(chan string, 1)
	go func() { lines <- readStderr(errR, progress) }()
	err = ex.StreamWithContext(ctx, remotecommand.StreamOptions{Stdin: stdin, Stdout: outW, Stderr: errW})
	outW.CloseWithError(err)
	errW.Close()
	consumeErr := <-consumed
	tail := <-lines
	if err != nil {
		return fmt.Errorf("exec in %s: %w%s", pod, err, tail)
	}
	return consumeErr
}

// held is a stdin that ends only once release is closed.
type held struct {
	r       io.Reader
	release <-chan struct{}
}

func (h held) Read(b []byte) (int, error) {
	n, err := h.r.Read(b)
	if err == io.EOF && n == 0 {
		<-h.release
	}
	return n, err
}

// readStderr reads a generator's stderr to its end, giving progress
// lines to progress (when set) and returning the last other lines.
func readStderr(r io.Reader, progress func(load.Snapshot)) string {
	var last []string
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		if s, ok := fanout.ParseProgress(sc.Text()); ok {
			if progress != nil {
				progress(s)
			}
			continue
		}
		last = append(last, sc.Text())
		if len(last) > tailLines {
			last = last[1:]
		}
	}
	// A line too long for the scanner ends the scan; the rest is drained
	// so the stream is not held.
	io.Copy(io.Discard, r)
	if len(last) == 0 {
		return ""
	}
	return "; its stderr ends:\n" + strings.Join(last, "\n")
}

// combine adds up the generators' latest snapshots for one display.
func combine(n int, progress func(load.Snapshot)) func(int, load.Snapshot) {
	if progress == nil {
		return func(int, load.Snapshot) {}
	}
	var mu sync.Mutex
	latest := make([]load.Snapshot, n)
	return func(k int, s load.Snapshot) {
		mu.Lock()
		defer mu.Unlock()
		latest[k] = s
		var all load.Snapshot
		for _, l := range latest {
			all.Elapsed = max(all.Elapsed, l.Elapsed)
			all.Requests += l.Requests
			all.InFlight += l.InFlight
			all.Errors += l.Errors
			all.RateRPS += l.RateRPS
			all.P99Ms = max(all.P99Ms, l.P99Ms)
		}
		progress(all)
	}
}

// Fetch sends one request from inside the cluster (a hook, a service's
// first requests: the runner may not reach a pod's address) through
// the first generator, its target checked as a load's. Any status is an
// answer; err is for a request that got none.
func (p *Pool) Fetch(ctx context.Context, method, url string, header http.Header, body []byte) (int, http.Header, []byte, error) {
	req, err := json.Marshal(fanout.FetchRequest{Method: method, URL: url, Header: header, Body: body, ClusterNetworks: p.c.Networks, AllowHosts: p.c.AllowHosts})
	if err != nil {
		return 0, nil, nil, fmt.Errorf("fetch %s: %w", url, err)
	}
	var resp fanout.FetchResponse
	decode := func(r io.Reader) error { return json.NewDecoder(r).Decode(&resp) }
	if err := p.exec(ctx, p.pods[0], []string{"--fetch"}, req, decode, nil); err != nil {
		return 0, nil, nil, fmt.Errorf("fetch %s from pod %s: %w", url, p.pods[0], err)
	}
	return resp.Status, resp.Header, resp.Body, nil
}

// Usage is one generator's CPU over a Run.
type Usage struct {
	Pod  string  `json:"pod"`
	CPUS float64 `json:"cpu_s"`
	// Utilization is its CPU over the load's span, as a share of what it
	// could use: one core (its loop's) or its pod's limit when lower.
	Utilization float64 `json:"utilization"`
	Saturated   bool    `json:"saturated"` // over results.MaxGeneratorCPU
}

// Usage is each generator's CPU over the Run that returned m: the
// generators measure their own (fanout.Generator), and a pod limited
// to less than a core saturates at its limit, not at one core.
func (p *Pool) Usage(m *fanout.Merged) []Usage {
	capacity := 1.0
	if p.c.CPUs > 0 {
		capacity = min(1, p.c.CPUs)
	}
	out := make([]Usage, len(m.Generators))
	for i, g := range m.Generators {
		u := g.GeneratorCPUUtil / capacity
		out[i] = Usage{Pod: p.pods[g.Share.Index], CPUS: g.GeneratorCPUS, Utilization: u, Saturated: u > results.MaxGeneratorCPU}
	}
	return out
}

// Stop deletes the pool's pods and waits until they are gone, whatever
// the run's context: it runs on Ctrl-C too.
func (p *Pool) Stop() error {
	ctx, cancel := context.WithTimeout(context.Background(), stopWait)
	defer cancel()
	pods := p.cs.CoreV1().Pods(p.c.Namespace.Name)
	var errs []error
	for _, name := range p.pods {
		if err := pods.Delete(ctx, name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("delete generator pod %s: %w", name, err))
		}
	}
	for _, name := range p.pods {
		for {
			_, err := pods.Get(ctx, name, metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				break
			}
			if ctx.Err() != nil {
				errs = append(errs, fmt.Errorf("generator pod %s not gone after %v", name, stopWait))
				break
			}
			time.Sleep(250 * time.Millisecond)
		}
	}
	return errors.Join(errs...)
}
