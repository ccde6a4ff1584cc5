package deps

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// checkCredentials checks that in takes its own credentials and refuses
// wrong ones and the server's well-known accounts, and that its password
// is in no file but the expected ones.
func checkCredentials(ctx context.Context, t *testing.T, in *Instance, c client) {
	t.Helper()
	password := in.Values["password"]
	if c.login == nil {
		if password != "" {
			t.Errorf("%s offers a password but the test cannot log in", in.Kind)
		}
		return
	}
	if len(password) < 20 {
		t.Errorf("password %q is no fresh random secret", password)
	}
	if err := c.login(ctx, in, in.Values["user"], password); err != nil {
		t.Errorf("login with the instance's credentials: %v", err)
	}
	refused := regexp.MustCompile(c.refused)
	// At once: RabbitMQ answers a refused login after 3 s.
	var wg sync.WaitGroup
	for _, l := range append([]login{{in.Values["user"], "wrong"}, {in.Values["user"], ""}}, c.strangers...) {
		wg.Go(func() {
			if err := c.login(ctx, in, l.user, l.password); err == nil || !refused.MatchString(err.Error()) {
				t.Errorf("login as %q with password %q: got %v, want it refused (%s)", l.user, l.password, err, c.refused)
			}
		})
	}
	wg.Wait()
	if got := filesContaining(t, password, in.env.dir, in.env.logDir); !slices.Equal(got, c.secrets) {
		t.Errorf("the password is in the clear in %q, want only in %q", got, c.secrets)
	}
}

// filesContaining lists the files under dirs, relative to their dir, that
// contain secret.
func filesContaining(t *testing.T, secret string, dirs ...string) []string {
	t.Helper()
	var found []string
	for _, dir := range dirs {
		filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil || !d.Type().IsRegular() {
				return nil // a server's file may come and go meanwhile
			}
			if b, _ := os.ReadFile(path); bytes.Contains(b, []byte(secret)) {
				rel, _ := filepath.Rel(dir, path)
				found = append(found, rel)
			}
			return nil
		})
	}
	return found
}

// checkServerProcess checks that the process proc started for the server
// is the server program itself, which the parent-death signal reaches, not
// a script that started it, and that it runs as the kind's system user.
func checkServerProcess(t *testing.T, in *Instance, c client) {
	t.Helper()
	pid := in.Processes()[0].Pid()
	exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid))
	if err != nil {
		t.Fatal(err)
	}
	if want := serverExe(in); filepath.Base(exe) != want {
		t.Errorf("process %d runs %s, want the server %s itself", pid, exe, want)
	}
	if os.Geteuid() != 0 {
		return
	}
	want := "0"
	if c.user != "" {
		u, err := user.Lookup(c.user)
		if err != nil {
			t.Fatal(err)
		}
		want = u.Uid
	}
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(status), "\n") {
		// Uid: real effective saved filesystem
		if ids, ok := strings.CutPrefix(line, "Uid:"); ok && slices.ContainsFunc(strings.Fields(ids), func(id string) bool { return id != want }) {
			t.Errorf("server process %d has uids%s, want all %s", pid, ids, want)
		}
	}
}

// serverExe is the name of the file the server process executes: the
// program deps found, links resolved, or for RabbitMQ the Erlang VM its
// script execs.
func serverExe(in *Instance) string {
	var path string
	switch s := in.srv.(type) {
	case *postgres:
		path = s.server
	case *mariadb:
		path = s.server
	case *redis:
		path = s.server
	case *mongo:
		path = s.server
	case *rabbitmq:
		return "beam.smp"
	}
	if resolved, err := filepath.EvalSymlinks(path); err == nil {
		path = resolved
	}
	return filepath.Base(path)
}

// Every instance gets secrets of its own.
func TestPasswordsAreFresh(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	a, b := startForTest(ctx, t, Redis), startForTest(ctx, t, Redis)
	if a.Values["password"] == b.Values["password"] {
		t.Fatalf("two instances share the password %q", a.Values["password"])
	}
	if err := redisLogin(ctx, a, "", b.Values["password"]); err == nil {
		t.Error("an instance takes another's password")
	}
}
