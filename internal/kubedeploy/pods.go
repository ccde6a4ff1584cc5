package kubedeploy

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/msbench/msbench/internal/kube"
)

// awaitReady waits until an instance's pod is ready, and fails at once,
// with the reason and its log's tail, when the pod fails instead: a
// container that ended or was restarted, an image that cannot be had.
func (d *Deployment) awaitReady(ctx context.Context, in *instance, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	last := "no pod yet"
	for {
		pods, err := d.pods(ctx, in)
		if err != nil {
			last = err.Error()
		}
		for i := range pods {
			p := &pods[i]
			if p.DeletionTimestamp != nil {
				continue
			}
			if why := failure(p); why != "" {
				return fmt.Errorf("%s: pod %s %s; its log ends:\n%s", in.Name, p.Name, why, d.logTail(p))
			}
			if ready(p) {
				d.locked(func() { in.Pod, in.Ready, in.QoS = p.Name, time.Now(), string(p.Status.QOSClass) })
				return nil
			}
			last = describe(p)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s: not ready within %v (%v): %s", in.Name, timeout, ctx.Err(), last)
		case <-time.After(pollGap):
		}
	}
}

func ready(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// stuck are the reasons a container waits that waiting does not end.
// Not CreateContainerConfigError: the kubelet reports it while its cache
// has not yet seen the deployment's new Secret ("failed to sync secret
// cache", as deppod met), and retries; a pod that stays so is named by
// the readiness timeout's message.
var stuck = []string{"CrashLoopBackOff", "ImagePullBackOff", "ErrImageNeverPull", "InvalidImageName", "CreateContainerError", "RunContainerError"}

// failure says how a pod failed, "" if it has not: a service's container
// never ends on its own, so one that ended, even with status 0, failed.
func failure(p *corev1.Pod) string {
	if p.Status.Phase == corev1.PodFailed {
		return fmt.Sprintf("failed: %s %s", p.Status.Reason, p.Status.Message)
	}
	for _, c := range p.Status.ContainerStatuses {
		if t := c.State.Terminated; t != nil {
			return strings.TrimSpace(fmt.Sprintf("ended (%s, exit status %d) %s", t.Reason, t.ExitCode, t.Message))
		}
		if c.RestartCount > 0 {
			why := ""
			if t := c.LastTerminationState.Terminated; t != nil {
				why = fmt.Sprintf(", the last time %s with exit status %d", t.Reason, t.ExitCode)
			}
			return fmt.Sprintf("restarted %d times%s", c.RestartCount, why)
		}
		if w := c.State.Waiting; w != nil && slices.Contains(stuck, w.Reason) {
			return fmt.Sprintf("%s: %s", w.Reason, w.Message)
		}
	}
	return ""
}

// describe is where a pod that is not ready stands, for a timeout's
// message: its phase, its false conditions' reasons (Unschedulable: not
// enough CPU on any node), what its containers wait for.
func describe(p *corev1.Pod) string {
	out := []string{"pod " + p.Name + " " + string(p.Status.Phase)}
	for _, c := range p.Status.Conditions {
		if c.Status != corev1.ConditionTrue && (c.Reason != "" || c.Message != "") {
			out = append(out, fmt.Sprintf("%s: %s %s", c.Type, c.Reason, c.Message))
		}
	}
	for _, c := range p.Status.ContainerStatuses {
		if w := c.State.Waiting; w != nil {
			out = append(out, fmt.Sprintf("container %s waits: %s %s", c.Name, w.Reason, w.Message))
		}
	}
	return strings.Join(out, "; ")
}

// tailLines is how much of a failed pod's log an error quotes.
const tailLines = 20

// logTail is the end of a pod's output: its last run's when the
// container was restarted.
func (d *Deployment) logTail(p *corev1.Pod) string {
	ctx, cancel := context.WithTimeout(context.Background(), apiWait)
	defer cancel()
	n := int64(tailLines)
	opts := &corev1.PodLogOptions{TailLines: &n}
	if neverRan(p) {
		return "(none: it never ran)"
	}
	for _, c := range p.Status.ContainerStatuses {
		opts.Container = c.Name
		opts.Previous = c.State.Terminated == nil && c.RestartCount > 0
	}
	out, err := d.cs.CoreV1().Pods(d.ns).GetLogs(p.Name, opts).DoRaw(ctx)
	if err != nil {
		return fmt.Sprintf("(log unavailable: %v)", err)
	}
	if len(out) == 0 {
		return "(no output)"
	}
	return string(out)
}

// neverRan says whether no container of the pod has started yet, so
// that it has no output.
func neverRan(p *corev1.Pod) bool {
	for _, c := range p.Status.ContainerStatuses {
		if c.State.Waiting == nil || c.RestartCount > 0 {
			return false
		}
	}
	return true
}

// saveLogWait bounds how long a pod's output is followed after its pod
// was asked to go: its grace and the kubelet's kill.
const saveLogWait = stopGrace + 10*time.Second

// saveLog follows a pod's output into the instance's log in LogDir from
// its beginning, until it ends; the returned func waits for that, at
// most saveLogWait. It is called before the pod is deleted, so its
// shutdown's output is kept too.
func (d *Deployment) saveLog(in *instance, pod *corev1.Pod) (wait func()) {
	if d.c.LogDir == "" || neverRan(pod) {
		return func() {}
	}
	ctx, cancel := context.WithTimeout(context.Background(), saveLogWait)
	stream, err := d.cs.CoreV1().Pods(d.ns).GetLogs(pod.Name, &corev1.PodLogOptions{Container: in.Container, Follow: true}).Stream(ctx)
	if err != nil {
		cancel()
		d.c.Progress("  %s: pod %s's output is not kept: %v", in.Name, pod.Name, err)
		return func() {}
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer cancel()
		defer stream.Close()
		if err := appendTo(filepath.Join(d.c.LogDir, in.Name+".log"), stream, d.withheld); err != nil {
			d.c.Progress("  %s: pod %s's output: %v", in.Name, pod.Name, err)
		}
	}()
	return func() { <-done }
}

// appendTo appends what r gives to file, each line with the secrets
// withheld: the pods an instance ran one after another (Kill, Restart)
// share its log.
func appendTo(file string, r io.Reader, withheld kube.Withholder) error {
	f, err := os.OpenFile(file, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	lines := bufio.NewReader(r)
	for err == nil {
		var line string
		line, err = lines.ReadString('\n')
		if _, werr := f.WriteString(withheld.Replace(line)); werr != nil {
			err = werr
		}
	}
	if err == io.EOF {
		err = nil
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// poll calls done every pollGap until it says so or ctx ends.
func poll(ctx context.Context, done func(context.Context) (bool, error)) error {
	for {
		ok, err := done(ctx)
		if ok {
			return nil
		}
		select {
		case <-ctx.Done():
			if err == nil {
				err = ctx.Err()
			}
			return err
		case <-time.After(pollGap):
		}
	}
}

func isNotFound(err error) bool { return apierrors.IsNotFound(err) }
