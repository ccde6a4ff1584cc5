package deppod

import (
	"archive/tar"
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"path"
	"slices"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"

	"github.com/msbench/msbench/internal/deps"
)

// need is what the agent looks for in a base for a kind: the programs of
// package deps's find, and the system users its servers run as (the pod's
// agent is root, which PostgreSQL refuses to be and MariaDB and Redis are
// made not to be).
type need struct {
	// programs are groups of programs, each group in one directory:
	// initdb must be of the server's version, which an image holding
	// several versions tells apart by directory only.
	programs [][]string
	users    []string
	// onPath are programs that a server's script runs by name, so from
	// the image's PATH: rabbitmq-server execs erl.
	onPath []string
}

var needs = map[deps.Kind]need{
	deps.Postgres: {programs: [][]string{{"postgres", "initdb"}}, users: []string{"postgres"}},
	deps.Mongo:    {programs: [][]string{{"postgres", "initdb"}}, users: []string{"postgres"}},
	deps.Redis:    {programs: [][]string{{"redis-server"}}, users: []string{"redis"}},
	deps.RabbitMQ: {programs: [][]string{{"rabbitmq-server"}, {"epmd"}}, onPath: []string{"erl"}},
	deps.MariaDB:  {programs: [][]string{{"mariadbd"}, {"mariadb-install-db"}}, users: []string{"mysql"}},
}

// defaultPATH is the PATH containerd gives a container whose image sets
// none.
const defaultPATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// Programs finds kind's server programs in img, the base named base,
// whose file system is its layers' with whiteouts applied, and returns the
// directories holding them, in the order `msbench dependency KIND --bin`
// searches them (joined by colons): the directories of the image's PATH
// first, then any other holding a program of the name, the last by name
// first (the highest version of a versioned directory). Symbolic links are
// followed within the image. It also checks the system users the servers
// run as and the programs their scripts run from PATH. An error names the
// base, the kind and what is missing.
func Programs(base string, img v1.Image, kind deps.Kind) ([]string, error) {
	n, ok := needs[kind]
	if !ok {
		_, err := deps.ParseKind(string(kind))
		return nil, err
	}
	cfg, err := img.ConfigFile()
	if err != nil {
		return nil, fmt.Errorf("base %s: image config: %w", base, err)
	}
	fs, err := readTree(img, passwdFile)
	if err != nil {
		return nil, fmt.Errorf("base %s: %w", base, err)
	}
	pathDirs := pathList(envPATH(cfg.Config.Env))
	chosen := make([]string, len(n.programs))
	var dirs, missing []string
	for i, group := range n.programs {
		dir, lacking := fs.holding(group, pathDirs)
		switch {
		case len(lacking) > 0:
			missing = append(missing, lacking...)
		case dir == "":
			missing = append(missing, strings.Join(group, " and ")+" in one directory")
		case !slices.Contains(dirs, dir):
			dirs = append(dirs, dir)
		}
		chosen[i] = dir
	}
	for _, prog := range n.onPath {
		if !slices.ContainsFunc(pathDirs, func(d string) bool { return fs.executable(d, prog) }) {
			missing = append(missing, prog+" on the image's PATH "+strings.Join(pathDirs, ":"))
		}
	}
	for _, u := range n.users {
		if !fs.hasUser(u) {
			missing = append(missing, "system user "+u+" in "+passwdFile)
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("base %s cannot run %s: it has no %s", base, kind, strings.Join(missing, ", no "))
	}
	// The agent takes each program from the first directory of the list
	// holding one of its name, which must be the one found.
	for i, group := range n.programs {
		for _, prog := range group {
			first := dirs[slices.IndexFunc(dirs, func(d string) bool { return fs.executable(d, prog) })]
			if first != chosen[i] {
				return nil, fmt.Errorf("base %s cannot run %s: the agent would take %s from %s, searched first for %s, not from %s",
					base, kind, prog, first, strings.Join(n.programs[slices.Index(chosen, first)], " and "), chosen[i])
			}
		}
	}
	return dirs, nil
}

// pathList splits a PATH value into its absolute directories.
func pathList(value string) []string {
	var dirs []string
	for _, d := range strings.Split(value, ":") {
		if path.IsAbs(d) && !slices.Contains(dirs, path.Clean(d)) {
			dirs = append(dirs, path.Clean(d))
		}
	}
	return dirs
}

func envPATH(env []string) string {
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			return v
		}
	}
	return defaultPATH
}

// tree is a flattened image's file system: each path's tar header, and the
// content of the regular files asked for.
type tree struct {
	headers map[string]*tar.Header
	files   map[string][]byte
}

// passwdFile is where the image's system users are, read as Go's os/user
// reads them in the static agent.
const passwdFile = "/etc/passwd"

// readTree reads img's layers flattened, whiteouts applied, keeping the
// content of the files at the absolute paths keep.
func readTree(img v1.Image, keep ...string) (*tree, error) {
	t := &tree{headers: map[string]*tar.Header{}, files: map[string][]byte{}}
	rc := mutate.Extract(img)
	defer rc.Close()
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return t, nil
		}
		if err != nil {
			return nil, fmt.Errorf("read the image's files: %w", err)
		}
		p := path.Clean("/" + h.Name)
		t.headers[p] = h
		// A layer need not hold its files' directories, which the
		// runtime then makes.
		for d := path.Dir(p); t.headers[d] == nil; d = path.Dir(d) {
			t.headers[d] = &tar.Header{Name: d, Typeflag: tar.TypeDir, Mode: 0o755}
		}
		if slices.Contains(keep, p) && h.Typeflag == tar.TypeReg {
			if t.files[p], err = io.ReadAll(tr); err != nil {
				return nil, fmt.Errorf("read %s in the image: %w", p, err)
			}
		}
	}
}

// maxLinks bounds the symbolic links followed in resolving one path, as
// Linux's 40.
const maxLinks = 40

// resolve follows the symbolic links of p within the tree, and returns the
// path it names and its header; nil if it does not exist there.
func (t *tree) resolve(p string) (string, *tar.Header) {
	rest := strings.Split(strings.Trim(path.Clean("/"+p), "/"), "/")
	cur, links := "/", 0
	for len(rest) > 0 {
		c := rest[0]
		rest = rest[1:]
		if c == "" || c == "." {
			continue
		}
		if c == ".." {
			cur = path.Dir(cur)
			continue
		}
		next := path.Join(cur, c)
		h := t.headers[next]
		if h == nil {
			return "", nil
		}
		if h.Typeflag == tar.TypeSymlink {
			if links++; links > maxLinks {
				return "", nil
			}
			target := h.Linkname
			if !path.IsAbs(target) {
				target = path.Join(cur, target)
			}
			rest = append(strings.Split(strings.Trim(path.Clean(target), "/"), "/"), rest...)
			cur = "/"
			continue
		}
		cur = next
	}
	return cur, t.headers[cur]
}

// executable says whether dir holds name as a file someone may run (the
// agent is root), through links.
func (t *tree) executable(dir, name string) bool {
	_, h := t.resolve(path.Join(dir, name))
	if h == nil {
		return false
	}
	if h.Typeflag == tar.TypeLink {
		// A hard link's header may carry no mode: its target's is the
		// file's.
		_, h = t.resolve(h.Linkname)
	}
	return h != nil && h.Typeflag == tar.TypeReg && h.Mode&0o111 != 0
}

// holding is the first directory holding every program of group: the PATH
// directories in order, then the others where one of group's names is,
// the last by name first. lacking are the programs no directory holds.
func (t *tree) holding(group, pathDirs []string) (dir string, lacking []string) {
	var candidates, others []string
	for _, d := range pathDirs {
		if real, h := t.resolve(d); h != nil && h.Typeflag == tar.TypeDir && !slices.Contains(candidates, real) {
			candidates = append(candidates, real)
		}
	}
	for p := range t.headers {
		if slices.Contains(group, path.Base(p)) {
			if real, h := t.resolve(path.Dir(p)); h != nil && !slices.Contains(others, real) {
				others = append(others, real)
			}
		}
	}
	slices.Sort(others)
	for _, d := range slices.Backward(others) {
		if !slices.Contains(candidates, d) {
			candidates = append(candidates, d)
		}
	}
	for _, prog := range group {
		if !slices.ContainsFunc(candidates, func(d string) bool { return t.executable(d, prog) }) {
			lacking = append(lacking, prog)
		}
	}
	if len(lacking) > 0 {
		return "", lacking
	}
	for _, d := range candidates {
		if !slices.ContainsFunc(group, func(prog string) bool { return !t.executable(d, prog) }) {
			return d, nil
		}
	}
	return "", nil
}

// hasUser says whether the image's /etc/passwd names user.
func (t *tree) hasUser(user string) bool {
	sc := bufio.NewScanner(bytes.NewReader(t.files[passwdFile]))
	for sc.Scan() {
		if name, _, _ := strings.Cut(sc.Text(), ":"); name == user {
			return true
		}
	}
	return false
}
