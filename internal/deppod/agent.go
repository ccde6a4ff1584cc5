// Package deppod runs a dependency (PostgreSQL, Redis, RabbitMQ, MariaDB,
// FerretDB) as a Kubernetes pod: the agent that `msbench dependency KIND`
// runs in the container, which is package deps's own start-up (initdb,
// config files, accounts, readiness) on the pod's address with the
// password of a Kubernetes Secret, and its images: a static msbench on
// Debian's packages for the local cluster, or on a configured base such as
// the official postgres image (BuildOn), whose own server programs the
// agent runs.
//
// A Kubernetes backend runs one so:
//
//	store := &image.Store{Dir: filepath.Join(root, ".cache", "images")}
//	b, err := deppod.BuildOn(ctx, store, root, deps.Postgres, bases["postgres"]) // "": Build's
//	archive, err := b.WriteArchive(dir) // ctr -n k8s.io images import archive
//	p, err := deppod.Deploy(ctx, ns, "db", deps.Postgres, b.Ref, limits)
//	// p.Values(): dep.db.KEY; p.Restart, p.Kill and p.Start: faults
//	defer p.Stop(ctx)
//
// Deploy's pod is of image b.Ref (imagePullPolicy Never), args from Args,
// the Secret's key as the environment variable PasswordEnv (secretKeyRef),
// the pod's IP as POD_IP (fieldRef status.podIP), and an emptyDir at
// VolumeDir; its log's first line that parses as an Event of kind "ready"
// carries the values, the password in them as PasswordPlaceholder
// (Event.Resolve puts it back).
package deppod

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/msbench/msbench/internal/deps"
)

// PasswordEnv is the environment variable the agent reads the password of
// the dependency's account from: a Kubernetes Secret's key, through
// secretKeyRef, so that it is in neither the pod's spec nor its log.
const PasswordEnv = "MSBENCH_DEPENDENCY_PASSWORD"

// PasswordPlaceholder stands for the password in the values the agent
// prints (a URL or a DSN holds it).
const PasswordPlaceholder = "{password}"

// Password returns the password of kind's account from the environment
// (lookup is os.LookupEnv), or "" for a kind without one (mongo). A
// missing or unusable one is an error that names the variable and never
// shows the value.
func Password(kind deps.Kind, lookup func(string) (string, bool)) (string, error) {
	keys, err := deps.Keys(kind)
	if err != nil {
		return "", err
	}
	if !slices.Contains(keys, "password") {
		return "", nil
	}
	p, ok := lookup(PasswordEnv)
	if !ok || p == "" {
		return "", fmt.Errorf("%s needs its account's password in the environment variable %s (a Kubernetes Secret's key, by secretKeyRef)", kind, PasswordEnv)
	}
	if err := deps.CheckPassword(p); err != nil {
		return "", fmt.Errorf("%s: %w", PasswordEnv, err)
	}
	return p, nil
}

// Event is a line the agent prints as JSON on its standard output.
type Event struct {
	// Event is "ready" once a client can use the dependency, and
	// "restarted" after each in-place restart.
	Event string    `json:"event"`
	Kind  deps.Kind `json:"kind"`
	Addr  string    `json:"addr"`
	// Values are deps.Instance.Values, the password replaced by
	// PasswordPlaceholder; set when ready.
	Values  map[string]string `json:"values,omitempty"`
	Seconds float64           `json:"seconds"` // start-up or restart time
}

// Resolve returns e's values with password in place of
// PasswordPlaceholder, as a study's placeholders need them.
func (e Event) Resolve(password string) map[string]string {
	return replaceAll(e.Values, PasswordPlaceholder, password)
}

func replaceAll(values map[string]string, old, new string) map[string]string {
	out := maps.Clone(values)
	if old == "" {
		return out
	}
	for k, v := range out {
		out[k] = strings.ReplaceAll(v, old, new)
	}
	return out
}

// Run starts kind with opts, prints a ready Event on out, and holds the
// dependency until ctx is done (SIGTERM on the pod's deletion), then stops
// it, which removes its processes and private directory. Each value from
// restart restarts the server in place, on the same address and data ("the
// database went away and came back" without a new pod, IP or data), and
// prints a restarted Event. It returns ctx's error if ctx ended before the
// dependency was ready.
func Run(ctx context.Context, kind deps.Kind, opts deps.Options, out io.Writer, restart <-chan os.Signal) error {
	in, err := deps.Start(ctx, kind, opts)
	if err != nil {
		if ctx.Err() != nil {
			return errors.Join(ctx.Err(), err)
		}
		return err
	}
	err = emit(out, Event{Event: "ready", Kind: kind, Addr: in.Addr,
		Values:  replaceAll(in.Values, opts.Password, PasswordPlaceholder),
		Seconds: in.StartupTime.Seconds()})
	for err == nil {
		select {
		case <-ctx.Done():
			return in.Stop()
		case <-restart:
			began := time.Now()
			if err = in.Restart(ctx); err == nil {
				err = emit(out, Event{Event: "restarted", Kind: kind, Addr: in.Addr, Seconds: time.Since(began).Seconds()})
			}
		}
	}
	if ctx.Err() != nil {
		// A restart cut short by the pod's deletion is that deletion.
		return in.Stop()
	}
	return errors.Join(err, in.Stop())
}

func emit(out io.Writer, e Event) error {
	line, err := json.Marshal(e)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(out, "%s\n", line)
	return err
}
