// Package deps starts the databases and brokers that services under test
// depend on (PostgreSQL, Redis, RabbitMQ, MariaDB and a MongoDB stand-in) as
// real servers, as children of msbench supervised by package proc, each on a
// free loopback port with a private data directory. Nothing is shared with a
// system installation: no config file of the host is read, no system service
// is started, and Stop leaves no process, port or file behind.
package deps

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/msbench/msbench/internal/lease"
	"github.com/msbench/msbench/internal/placement"
	"github.com/msbench/msbench/internal/proc"
)

// Kind names a dependency that msbench can start.
type Kind string

// The kinds msbench can start. Mongo is served by FerretDB (MongoDB wire
// protocol on a private PostgreSQL), because Debian packages no MongoDB server.
const (
	Postgres Kind = "postgres"
	Redis    Kind = "redis"
	RabbitMQ Kind = "rabbitmq"
	MariaDB  Kind = "mariadb"
	Mongo    Kind = "mongo"
)

// servers makes the implementation of each kind.
var servers = map[Kind]func() server{
	Postgres: func() server { return &postgres{} },
	Redis:    func() server { return &redis{} },
	RabbitMQ: func() server { return &rabbitmq{} },
	MariaDB:  func() server { return &mariadb{} },
	Mongo:    func() server { return &mongo{} },
}

// Kinds lists every kind, sorted.
func Kinds() []Kind {
	kinds := make([]Kind, 0, len(servers))
	for k := range servers {
		kinds = append(kinds, k)
	}
	slices.Sort(kinds)
	return kinds
}

// commonKeys are the placeholders of every kind: where it listens, and
// how a client connects.
var commonKeys = []string{"addr", "host", "port", "url"}

// Keys are the placeholders an instance of kind offers (Instance.Values),
// sorted.
func Keys(kind Kind) ([]string, error) {
	newServer, ok := servers[kind]
	if !ok {
		_, err := ParseKind(string(kind))
		return nil, err
	}
	return slices.Sorted(slices.Values(slices.Concat(commonKeys, newServer().keys()))), nil
}

// ParseKind returns the kind named s, or an error listing the known kinds.
func ParseKind(s string) (Kind, error) {
	if _, ok := servers[Kind(s)]; ok {
		return Kind(s), nil
	}
	names := make([]string, 0, len(servers))
	for _, k := range Kinds() {
		names = append(names, string(k))
	}
	return "", fmt.Errorf("unknown dependency %q (known: %s)", s, strings.Join(names, ", "))
}

// Options says where an instance lives. Every field is optional.
type Options struct {
	// Name tells instances apart in process names and log files; default
	// the kind.
	Name string
	// Dir is the instance's private directory (data, sockets, config),
	// created if missing and removed by Stop. Its parents must be
	// searchable by the system users postgres and mysql, which run those
	// servers. Default: a new directory in os.TempDir().
	Dir string
	// LogDir receives the servers' output, one file per process, kept
	// after Stop. Default: Dir, so the logs go with it.
	LogDir string
	// Ports hands out the instance's ports; share one allocator per run.
	// Default: one allocator shared by the whole process.
	Ports *proc.PortAllocator
	// BinDir, if set, is the only place server programs are looked for,
	// instead of PATH and the Debian packages' own directories: one
	// directory or several separated by colons, searched in order.
	BinDir string
	// Root is the msbench checkout, which holds tools/ferretdb and the
	// build cache .cache/; default: found upwards from the working
	// directory.
	Root string
	// CPUs places every process of the instance, set-up programs
	// included, on these cores (see proc.Spec.CPUs); nil: every core.
	CPUs placement.CPUs
	// Listen, if set, is the HOST:PORT clients dial instead of a free
	// loopback port: a pod's IP and the port its Service names, for
	// msbench dependency in a container. A host other than loopback
	// also lets clients from other addresses log in (see listen.go).
	Listen string
	// Password, if set, is the account's password instead of a fresh
	// one: a Kubernetes Secret's. See CheckPassword.
	Password string
}

var defaultPorts proc.PortAllocator

const (
	// readyTimeout only has to tell a hung server from a slow one: one
	// that exits is noticed at once. Servers starting side by side on 2
	// cores slow each other down far past their few seconds alone: six
	// RabbitMQs booting at once (ipc's API test) were ready in 41-47 s on
	// an idle machine and 46-59 s beside two busy loops, where a minute
	// failed CI. Service managers give them longer still (Debian's units:
	// RabbitMQ 10 minutes, MariaDB 15).
	readyTimeout = 5 * time.Minute
	// restartGrace is how long a server may take to shut down cleanly
	// before it is killed for Restart, which keeps its data: as long as a
	// service manager would give it.
	restartGrace = 10 * time.Second
	// stopGrace is the same for Stop, which deletes the data right after,
	// so a clean shutdown protects nothing there (what a killed server
	// leaves outside the private dir, Stop frees anyway). It is short
	// because a run stopping on SIGTERM or Ctrl-C stops its dependencies
	// one after the other and must not wait long for a hung one, yet
	// about three times what the slowest, RabbitMQ, takes on 2 busy cores
	// (1.1 s), so that a kill stays the exception.
	stopGrace = 3 * time.Second
)

// Instance is a started dependency.
type Instance struct {
	Kind Kind
	Name string
	Addr string // 127.0.0.1:PORT, or Options.Listen
	// URL is a connection string that the usual client library takes,
	// with the credentials.
	URL string
	// Values are placeholders for a study: addr, host, port and url, and
	// where they apply user, password, database and (MariaDB) dsn. The
	// password is a random secret of this instance (no account of a
	// server has a known one), so these values and URL are the only way
	// in: keep them out of anything written to disk.
	Values map[string]string
	// StartupTime is from Start's call until ready, without finding or
	// building programs.
	StartupTime time.Duration

	env *env
	srv server

	// life serialises start, Restart and Stop; mu guards procs only, so
	// that Processes answers at once even while a restart takes seconds.
	life    sync.Mutex
	stopped bool
	mu      sync.Mutex
	procs   []running
}

// Start starts a dependency of kind and waits until a real client of it can
// connect and, where that makes sense, use a database and user msbench. On
// error nothing started is left running. A server that could not bind the
// free port it was given is started again on fresh ports (see portTries).
func Start(ctx context.Context, kind Kind, opts Options) (*Instance, error) {
	newServer, ok := servers[kind]
	if !ok {
		_, err := ParseKind(string(kind))
		return nil, err
	}
	return retryTaken(ctx, opts.Listen == "", func() (*Instance, error) { return startOnce(ctx, kind, newServer(), opts) })
}

// portTries is how often a dependency is started whose port another
// process took between the allocator's check and the server's bind. The
// allocator draws below the kernel's ephemeral range, out of outgoing
// connections' way (RabbitMQ lost its AMQP port to one once in a CI run),
// but another run's listener, or any process where the machine leaves no
// room below that range, can still take it.
const portTries = 3

// retryTaken calls start until it succeeds, fails for another reason than
// a port taken, or has tried portTries times; free says the ports are
// drawn afresh on each try (not given by Options.Listen).
func retryTaken(ctx context.Context, free bool, start func() (*Instance, error)) (*Instance, error) {
	for try := 1; ; try++ {
		in, err := start()
		if err == nil || !free || try == portTries || ctx.Err() != nil || !portTaken(err) {
			return in, err
		}
	}
}

// portTaken says whether err, with the log tail it carries, is a server's
// failure to bind its address because another process holds it, in the
// words of the servers msbench starts (the C library's, Erlang's, Go's).
func portTaken(err error) bool {
	msg := strings.ToLower(err.Error())
	return strings.Contains(msg, "address already in use") || strings.Contains(msg, "eaddrinuse")
}

func startOnce(ctx context.Context, kind Kind, srv server, opts Options) (*Instance, error) {
	e, err := newEnv(kind, opts)
	if err != nil {
		return nil, fmt.Errorf("start %s: %w", kind, err)
	}
	in := &Instance{Kind: kind, Name: e.name, env: e, srv: srv}
	// Before anything is created: a missing program is the likeliest error,
	// and a first build of one is not the server's start-up.
	if err := in.srv.find(ctx, e); err != nil {
		return nil, fmt.Errorf("start %s: %w", kind, err)
	}
	begin := time.Now()
	if err := in.start(ctx); err != nil {
		return nil, errors.Join(fmt.Errorf("start %s: %w", kind, err), in.Stop())
	}
	in.StartupTime = time.Since(begin)
	return in, nil
}

func (in *Instance) start(ctx context.Context) error {
	if err := in.env.create(); err != nil {
		return err
	}
	if err := in.srv.init(ctx, in.env); err != nil {
		return err
	}
	in.Addr = in.env.addr()
	in.URL = in.srv.url(in.env)
	in.Values = map[string]string{
		"addr": in.Addr,
		"host": in.env.host,
		"port": strconv.Itoa(in.env.port),
		"url":  in.URL,
	}
	maps.Copy(in.Values, in.srv.values(in.env))
	in.life.Lock()
	defer in.life.Unlock()
	if err := in.launch(ctx, nil); err != nil {
		return err
	}
	if s, ok := in.srv.(seeder); ok {
		return s.seeded(in.env)
	}
	return nil
}

// running is a started process and how to ask it to shut down.
type running struct {
	p    *proc.Process
	stop syscall.Signal
}

// launch starts the server's processes in order, each ready before the
// next, telling started (when not nil) of each as soon as it runs. The
// caller holds life.
func (in *Instance) launch(ctx context.Context, started func(*proc.Process)) error {
	if l, ok := in.srv.(leftovers); ok {
		if err := l.settle(ctx, in.env); err != nil {
			return err
		}
	}
	for _, l := range in.srv.launches(in.env) {
		p, err := proc.Start(ctx, l.spec)
		if err != nil {
			return err
		}
		in.mu.Lock()
		in.procs = append(in.procs, running{p, l.stop})
		in.mu.Unlock()
		if started != nil {
			started(p)
		}
		if err := proc.WaitReady(ctx, p, l.ready, readyTimeout); err != nil {
			return err
		}
	}
	if l, ok := in.srv.(leftovers); ok {
		l.lease(in.env)
	}
	return nil
}

// halt stops the processes in reverse start order, each given grace to
// exit cleanly. The caller holds life.
func (in *Instance) halt(grace time.Duration) error {
	in.mu.Lock()
	procs := in.procs
	in.mu.Unlock()
	var errs []error
	for _, r := range slices.Backward(procs) {
		errs = append(errs, stopGracefully(r.p, r.stop, grace))
	}
	in.mu.Lock()
	in.procs = nil
	in.mu.Unlock()
	return errors.Join(errs...)
}

// Processes returns the processes of the current start, the server first
// and then the helpers it needs (RabbitMQ's epmd), for resource accounting
// and fault injection (Kill, Pause, Resume). A restart replaces them.
func (in *Instance) Processes() []*proc.Process {
	in.mu.Lock()
	defer in.mu.Unlock()
	ps := make([]*proc.Process, 0, len(in.procs))
	// Helpers start before the server they serve.
	for _, r := range slices.Backward(in.procs) {
		ps = append(ps, r.p)
	}
	return ps
}

// Restart stops the server, cleanly if it still runs, and starts it again on
// the same address and data: "the database went away and came back". It
// also brings back a server that was killed.
func (in *Instance) Restart(ctx context.Context) error { return in.RestartEach(ctx, nil) }

// RestartEach is Restart telling started of each new process as soon as it
// runs, before it is ready, in start order (helpers first, the reverse of
// Processes): a server's start-up costs CPU (RabbitMQ's, seconds of it) that
// belongs to the server, and is seen as some other process's unless it is
// accounted from the start.
func (in *Instance) RestartEach(ctx context.Context, started func(*proc.Process)) error {
	in.life.Lock()
	defer in.life.Unlock()
	if in.stopped {
		return fmt.Errorf("restart %s: instance is stopped", in.Name)
	}
	if err := in.halt(restartGrace); err != nil {
		return fmt.Errorf("restart %s: %w", in.Name, err)
	}
	if err := in.launch(ctx, started); err != nil {
		return fmt.Errorf("restart %s: %w", in.Name, err)
	}
	return nil
}

// Stop stops every process of the instance, gracefully and then by force,
// and removes its private directory. It needs no context because it must
// also work when the run's context is cancelled; it is idempotent.
func (in *Instance) Stop() error {
	in.life.Lock()
	defer in.life.Unlock()
	if in.stopped {
		return nil
	}
	in.stopped = true
	err := in.halt(stopGrace)
	if l, ok := in.srv.(leftovers); ok {
		err = errors.Join(err, l.release(in.env))
	}
	if in.env.dir != "" {
		rmErr := os.RemoveAll(in.env.dir)
		if rmErr == nil && in.env.ownDir {
			lease.Release(lease.Dir, in.env.dir)
		}
		err = errors.Join(err, rmErr)
	}
	if err != nil {
		return fmt.Errorf("stop %s: %w", in.Name, err)
	}
	return nil
}

// env is what an instance is made of, fixed for its life: restarts reuse
// the same ports and directory.
type env struct {
	kind   Kind
	name   string
	dir    string
	ownDir bool // made by create, so leased
	logDir string
	port   int
	ports  *proc.PortAllocator
	binDir string
	root   string
	cpus   placement.CPUs
	host   string // what clients dial and the server binds
	fixed  bool   // port given by Options.Listen
	secret string // Options.Password
}

func newEnv(kind Kind, opts Options) (*env, error) {
	e := &env{
		kind:   kind,
		name:   opts.Name,
		dir:    opts.Dir,
		logDir: opts.LogDir,
		ports:  opts.Ports,
		binDir: opts.BinDir,
		root:   opts.Root,
		cpus:   opts.CPUs,
		host:   loopback,
		secret: opts.Password,
	}
	if e.name == "" {
		e.name = string(kind)
	}
	if e.ports == nil {
		e.ports = &defaultPorts
	}
	if e.secret != "" {
		if err := CheckPassword(e.secret); err != nil {
			return nil, err
		}
	}
	return e, e.listen(opts.Listen)
}

// create makes the private dir and takes the main port.
func (e *env) create() error {
	if e.dir == "" {
		dir, err := os.MkdirTemp("", "msbench-"+e.name+"-")
		if err != nil {
			return fmt.Errorf("private dir: %w", err)
		}
		// Ours to remove, also after a hard death: the next msbench
		// does it then.
		lease.Take(lease.Dir, dir)
		e.dir, e.ownDir = dir, true
	} else if err := os.MkdirAll(e.dir, 0o755); err != nil {
		return fmt.Errorf("private dir: %w", err)
	}
	abs, err := filepath.Abs(e.dir)
	if err != nil {
		return fmt.Errorf("private dir: %w", err)
	}
	e.dir = abs
	// Servers that run as their own system user must enter it.
	if err := os.Chmod(e.dir, 0o755); err != nil {
		return fmt.Errorf("private dir: %w", err)
	}
	if e.logDir == "" {
		e.logDir = e.dir
	}
	if !e.fixed {
		e.port, err = e.ports.Next()
	}
	return err
}

func (e *env) addr() string { return net.JoinHostPort(e.host, strconv.Itoa(e.port)) }

// path is a file or directory in the private dir.
func (e *env) path(name string) string { return filepath.Join(e.dir, name) }

// logPath is where the output of program goes.
func (e *env) logPath(program string) string {
	return filepath.Join(e.logDir, e.name+"-"+program+".log")
}

// spec is a process of the instance, named after it, logging to its own
// file.
func (e *env) spec(program, path string, args ...string) proc.Spec {
	return proc.Spec{
		Name:    e.name + "/" + program,
		Path:    path,
		Args:    args,
		LogPath: e.logPath(program),
		CPUs:    e.cpus,
	}
}
