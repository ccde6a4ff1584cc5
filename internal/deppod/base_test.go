package deppod

import (
	"archive/tar"
	"bytes"
	"io"
	"slices"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"

	"github.com/msbench/msbench/internal/deps"
)

// file is an entry of a synthetic layer: a program (mode 0755) unless
// mode, link or body say otherwise.
type file struct {
	name string
	mode int64
	link string // a symbolic link to this
	hard bool   // link is a hard link's target
	body string
}

func layer(t *testing.T, files ...file) v1.Layer {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, f := range files {
		h := &tar.Header{Name: strings.TrimPrefix(f.name, "/"), Mode: f.mode, Typeflag: tar.TypeReg, Size: int64(len(f.body))}
		switch {
		case strings.HasSuffix(f.name, "/"):
			h.Typeflag, h.Mode = tar.TypeDir, 0o755
		case f.hard:
			h.Typeflag, h.Linkname, h.Size = tar.TypeLink, strings.TrimPrefix(f.link, "/"), 0
		case f.link != "":
			h.Typeflag, h.Linkname, h.Mode = tar.TypeSymlink, f.link, 0o777
		case h.Mode == 0:
			h.Mode = 0o755
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if _, err := io.WriteString(tw, f.body); h.Typeflag == tar.TypeReg && err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	l, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(buf.Bytes())), nil })
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func passwd(users ...string) file {
	body := "root:x:0:0:root:/root:/bin/sh\n"
	for _, u := range users {
		body += u + ":x:999:999::/home/" + u + ":/bin/sh\n"
	}
	return file{name: "/etc/passwd", mode: 0o644, body: body}
}

// baseOf is an image of layers, with PATH path ("" sets none).
func baseOf(t *testing.T, path string, layers ...[]file) v1.Image {
	t.Helper()
	img := empty.Image
	for _, files := range layers {
		var err error
		if img, err = mutate.AppendLayers(img, layer(t, files...)); err != nil {
			t.Fatal(err)
		}
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	cfg = cfg.DeepCopy()
	if path != "" {
		cfg.Config.Env = []string{"PATH=" + path}
	}
	img, err = mutate.ConfigFile(img, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return img
}

// The server programs are found where standard images keep them (their
// layouts as of postgres:16-bookworm, redis:7-bookworm, rabbitmq:3.13 and
// mariadb:11), through links, with whiteouts applied, and a base without
// them is refused naming the base, the kind and what it lacks.
func TestPrograms(t *testing.T) {
	// rabbitmq:3.13 builds Erlang into /opt/erlang, whose bin holds links
	// into lib/erlang, whose bin holds links into the runtime's.
	const rabbitPATH = "/opt/rabbitmq/sbin:/opt/erlang/bin:/opt/openssl/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
	erlang := []file{
		{name: "/opt/erlang/lib/erlang/erts-14.2.5/bin/epmd"},
		{name: "/opt/erlang/lib/erlang/erts-14.2.5/bin/erlexec"},
		{name: "/opt/erlang/lib/erlang/bin/epmd", link: "../erts-14.2.5/bin/epmd"},
		{name: "/opt/erlang/lib/erlang/bin/erl", body: "#!/bin/sh\n"},
		{name: "/opt/erlang/bin/epmd", link: "../lib/erlang/bin/epmd"},
		{name: "/opt/erlang/bin/erl", link: "/opt/erlang/lib/erlang/bin/erl"},
	}
	tests := []struct {
		name string
		kind deps.Kind
		img  v1.Image
		want []string
		err  string
	}{
		{name: "redis in /usr/local/bin", kind: deps.Redis,
			img:  baseOf(t, "", []file{passwd("redis"), {name: "/usr/local/bin/redis-server"}}),
			want: []string{"/usr/local/bin"}},
		{name: "postgres in a versioned directory off PATH, the highest", kind: deps.Postgres,
			img: baseOf(t, "/usr/local/bin:/usr/bin:/bin", []file{passwd("postgres"),
				{name: "/usr/lib/postgresql/15/bin/postgres"}, {name: "/usr/lib/postgresql/15/bin/initdb"},
				{name: "/usr/lib/postgresql/16/bin/postgres"}, {name: "/usr/lib/postgresql/16/bin/initdb"},
				// Debian's wrapper is on PATH, without its initdb.
				{name: "/usr/bin/postgres", link: "../share/postgresql-common/pg_wrapper"},
				{name: "/usr/share/postgresql-common/pg_wrapper"}}),
			want: []string{"/usr/lib/postgresql/16/bin"}},
		{name: "mongo's PostgreSQL on PATH", kind: deps.Mongo,
			img: baseOf(t, "/usr/lib/postgresql/16/bin:/usr/bin", []file{passwd("postgres"),
				{name: "/usr/lib/postgresql/16/bin/postgres"}, {name: "/usr/lib/postgresql/16/bin/initdb"}}),
			want: []string{"/usr/lib/postgresql/16/bin"}},
		{name: "mariadb in two directories", kind: deps.MariaDB,
			img: baseOf(t, "", []file{passwd("mysql"),
				{name: "/usr/sbin/mariadbd"}, {name: "/usr/bin/mariadb-install-db"}}),
			want: []string{"/usr/sbin", "/usr/bin"}},
		{name: "rabbitmq and Erlang's links", kind: deps.RabbitMQ,
			img:  baseOf(t, rabbitPATH, append([]file{{name: "/opt/rabbitmq/sbin/rabbitmq-server"}}, erlang...)),
			want: []string{"/opt/rabbitmq/sbin", "/opt/erlang/bin"}},
		{name: "a usr-merged /bin is /usr/bin", kind: deps.Redis,
			img:  baseOf(t, "/bin:/usr/bin", []file{passwd("redis"), {name: "/bin", link: "usr/bin"}, {name: "/usr/bin/redis-server"}}),
			want: []string{"/usr/bin"}},
		{name: "a hard link", kind: deps.Redis,
			img: baseOf(t, "", []file{passwd("redis"), {name: "/usr/bin/redis-check-rdb"},
				{name: "/usr/bin/redis-server", link: "/usr/bin/redis-check-rdb", hard: true}}),
			want: []string{"/usr/bin"}},
		{name: "moved by a later layer, the old one whited out", kind: deps.Redis,
			img: baseOf(t, "", []file{passwd("redis"), {name: "/usr/bin/redis-server"}},
				[]file{{name: "/usr/local/bin/redis-server"}, {name: "/usr/bin/.wh.redis-server", mode: 0o644}}),
			want: []string{"/usr/local/bin"}},
		{name: "whited out", kind: deps.Redis,
			img: baseOf(t, "", []file{passwd("redis"), {name: "/usr/bin/redis-server"}},
				[]file{{name: "/usr/bin/.wh.redis-server", mode: 0o644}}),
			err: "base B cannot run redis: it has no redis-server"},
		{name: "a directory whited out", kind: deps.Redis,
			img: baseOf(t, "", []file{passwd("redis"), {name: "/opt/redis/bin/redis-server"}},
				[]file{{name: "/opt/.wh.redis", mode: 0o644}}),
			err: "base B cannot run redis: it has no redis-server"},
		{name: "not executable", kind: deps.Redis,
			img: baseOf(t, "", []file{passwd("redis"), {name: "/usr/bin/redis-server", mode: 0o644}}),
			err: "base B cannot run redis: it has no redis-server"},
		{name: "a dangling link", kind: deps.Redis,
			img: baseOf(t, "", []file{passwd("redis"), {name: "/usr/bin/redis-server", link: "redis-check-rdb"}}),
			err: "base B cannot run redis: it has no redis-server"},
		{name: "nothing", kind: deps.Postgres,
			img: baseOf(t, "", []file{{name: "/etc/os-release", mode: 0o644}}),
			err: "base B cannot run postgres: it has no postgres, no initdb, no system user postgres in /etc/passwd"},
		{name: "postgres and initdb apart", kind: deps.Postgres,
			img: baseOf(t, "", []file{passwd("postgres"),
				{name: "/usr/lib/postgresql/16/bin/postgres"}, {name: "/usr/lib/postgresql/15/bin/initdb"}}),
			err: "base B cannot run postgres: it has no postgres and initdb in one directory"},
		{name: "mariadb without its user", kind: deps.MariaDB,
			img: baseOf(t, "", []file{passwd("mariadb"), {name: "/usr/sbin/mariadbd"}, {name: "/usr/bin/mariadb-install-db"}}),
			err: "base B cannot run mariadb: it has no system user mysql in /etc/passwd"},
		{name: "rabbitmq without erl on PATH", kind: deps.RabbitMQ,
			img: baseOf(t, "/opt/rabbitmq/sbin:/opt/erlang/lib/erlang/erts-14.2.5/bin", append([]file{{name: "/opt/rabbitmq/sbin/rabbitmq-server"}}, erlang...)),
			err: "base B cannot run rabbitmq: it has no erl on the image's PATH /opt/rabbitmq/sbin:/opt/erlang/lib/erlang/erts-14.2.5/bin"},
		{name: "an epmd the list would take before the one found", kind: deps.RabbitMQ,
			img: baseOf(t, "/opt/erlang/bin:/opt/rabbitmq/sbin", append([]file{{name: "/opt/rabbitmq/sbin/rabbitmq-server"}, {name: "/opt/rabbitmq/sbin/epmd"}}, erlang...)),
			err: "base B cannot run rabbitmq: the agent would take epmd from /opt/rabbitmq/sbin, searched first for rabbitmq-server, not from /opt/erlang/bin"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Programs("B", tt.img, tt.kind)
			if tt.err != "" {
				if err == nil || err.Error() != tt.err {
					t.Fatalf("got %q, %v; want the error %q", got, err, tt.err)
				}
				return
			}
			if err != nil || !slices.Equal(got, tt.want) {
				t.Fatalf("got %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}
