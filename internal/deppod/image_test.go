package deppod

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/jackc/pgx/v5"
	amqp "github.com/rabbitmq/amqp091-go"
	goredis "github.com/redis/go-redis/v9"
	"go.mongodb.org/mongo-driver/bson"
	mongodriver "go.mongodb.org/mongo-driver/mongo"
	"go.mongodb.org/mongo-driver/mongo/options"

	"github.com/msbench/msbench/internal/deps"
	"github.com/msbench/msbench/internal/image"
	"github.com/msbench/msbench/internal/image/imagetest"
	"github.com/msbench/msbench/internal/proc"
)

// Each dependency's image without a cluster: unpacked, its entrypoint runs
// chrooted into it as a container runtime would run it (a /proc, and a /dev
// with the usual devices and a /dev/shm, in a mount namespace of its own; a
// host name of its own and the kubelet's /etc/hosts; the password in the
// environment), on a loopback port; a client on the
// host uses it with the values it prints, and SIGTERM stops it cleanly,
// leaving no data directory in the image's root.
func TestDependenciesRunInTheirImages(t *testing.T) {
	store := imagetest.Store(t)
	root := filepath.Dir(filepath.Dir(store.Dir))
	tests := []struct {
		kind deps.Kind
		use  func(ctx context.Context, values map[string]string) (string, error)
	}{
		{deps.Postgres, func(ctx context.Context, v map[string]string) (string, error) {
			conn, err := pgx.Connect(ctx, v["url"])
			if err != nil {
				return "", err
			}
			defer conn.Close(ctx)
			var version string
			err = conn.QueryRow(ctx, "SHOW server_version").Scan(&version)
			return "PostgreSQL " + version, err
		}},
		{deps.Redis, func(ctx context.Context, v map[string]string) (string, error) {
			opts, err := goredis.ParseURL(v["url"])
			if err != nil {
				return "", err
			}
			c := goredis.NewClient(opts)
			defer c.Close()
			info, err := c.Info(ctx, "server").Result()
			_, version, _ := strings.Cut(info, "redis_version:")
			version, _, _ = strings.Cut(version, "\r")
			return "Redis " + version, err
		}},
		{deps.RabbitMQ, func(ctx context.Context, v map[string]string) (string, error) {
			conn, err := amqp.DialConfig(v["url"], amqp.Config{Dial: func(network, addr string) (net.Conn, error) {
				return new(net.Dialer).DialContext(ctx, network, addr)
			}})
			if err != nil {
				return "", err
			}
			defer conn.Close()
			return fmt.Sprintf("RabbitMQ %v", conn.Properties["version"]), nil
		}},
		{deps.MariaDB, mariadbVersion},
		{deps.Mongo, func(ctx context.Context, v map[string]string) (string, error) {
			c, err := mongodriver.Connect(ctx, options.Client().ApplyURI(v["url"]))
			if err != nil {
				return "", err
			}
			defer c.Disconnect(context.WithoutCancel(ctx))
			var info bson.M
			err = c.Database(v["database"]).RunCommand(ctx, bson.D{{Key: "buildInfo", Value: 1}}).Decode(&info)
			return fmt.Sprintf("FerretDB as MongoDB %v", info["version"]), err
		}},
	}
	// make test builds and runs PostgreSQL's image alone: the other four
	// cost five more minutes on a fresh machine (a Debian base each), which
	// the 25 minutes CI aims at cannot spare. After a change to this package
	// or to deps, MSBENCH_ALL_DEPENDENCY_IMAGES=1 runs all five.
	all := os.Getenv("MSBENCH_ALL_DEPENDENCY_IMAGES") != ""
	for _, tt := range tests {
		t.Run(string(tt.kind), func(t *testing.T) {
			if !all && tt.kind != deps.Postgres {
				t.Skip("one image in make test; MSBENCH_ALL_DEPENDENCY_IMAGES=1 runs every kind's")
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
			defer cancel()
			began := time.Now()
			b, err := Build(ctx, store, root, tt.kind)
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
			// Debian's layout, which the agent knows: no --bin but for
			// FerretDB, and the base's user.
			want := []string{Binary, "dependency", string(tt.kind)}
			if tt.kind == deps.Mongo {
				want = append(want, "--bin", postgresBin)
			}
			if !slices.Equal(cfg.Config.Entrypoint, want) || cfg.Config.User != "" {
				t.Fatalf("entrypoint %q as user %q, want %q as the base's", cfg.Config.Entrypoint, cfg.Config.User, want)
			}
			runInImage(ctx, t, b.Image, cfg.Config.Entrypoint, cfg.Config.Env, tt.use)
		})
	}
}

// mariadbVersion asks the MariaDB of values its version.
func mariadbVersion(ctx context.Context, v map[string]string) (string, error) {
	cfg, err := mysql.ParseDSN(v["dsn"])
	if err != nil {
		return "", err
	}
	connector, err := mysql.NewConnector(cfg)
	if err != nil {
		return "", err
	}
	db := sql.OpenDB(connector)
	defer db.Close()
	var version string
	err = db.QueryRowContext(ctx, "SELECT VERSION()").Scan(&version)
	return "MariaDB " + version, err
}

// runInImage unpacks img, runs entrypoint in it on a loopback port with a
// fresh password, uses it with the values it prints, and stops it by
// SIGTERM.
func runInImage(ctx context.Context, t *testing.T, img image.Image, entrypoint, env []string,
	use func(ctx context.Context, values map[string]string) (string, error)) {
	t.Helper()
	rootfs := t.TempDir()
	untar := exec.CommandContext(ctx, "tar", "-x", "-C", rootfs)
	untar.Stdin = mutate.Extract(img.Image)
	if out, err := untar.CombinedOutput(); err != nil {
		t.Fatalf("unpack the image: %v\n%s", err, out)
	}
	// The kubelet's /etc/hosts names localhost and the pod, which
	// RabbitMQ's node name and mariadb-install-db look up; the pod's IP
	// is loopback here.
	const hostname = "msbench-dependency-0"
	hosts := "127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n127.0.0.1\t" + hostname + "\n"
	if err := os.WriteFile(filepath.Join(rootfs, "etc", "hosts"), []byte(hosts), 0o644); err != nil {
		t.Fatal(err)
	}
	port, err := new(proc.PortAllocator).Next()
	if err != nil {
		t.Fatal(err)
	}
	listen := "127.0.0.1:" + strconv.Itoa(port)
	password := rand.Text()
	args := append(slices.Clone(entrypoint), "--listen", listen, "--dir", DataDir)
	// unshare execs sh, which execs chroot, which execs msbench: the
	// process is the agent, as PID 1 of a container would be.
	cmd := exec.CommandContext(ctx, "unshare", append([]string{"--mount", "--uts", "--propagation", "private", "--",
		"/bin/sh", "-c", `hostname ` + hostname + ` && mount -t proc proc "$0/proc" && mount -t tmpfs dev "$0/dev" &&
			for d in null zero full random urandom; do touch "$0/dev/$d" && mount --bind "/dev/$d" "$0/dev/$d" || exit; done &&
			mkdir "$0/dev/shm" && mount -t tmpfs shm "$0/dev/shm" && exec chroot "$0" "$@"`,
		rootfs}, args...)...)
	cmd.Env = append(slices.Clone(env), PasswordEnv+"="+password)
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
	t.Logf("ready in the image in %.1fs", ready.Seconds)
	what, err := use(ctx, ready.Resolve(password))
	if err != nil {
		t.Fatalf("use the dependency in the image: %v", err)
	}
	t.Log(what)
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
