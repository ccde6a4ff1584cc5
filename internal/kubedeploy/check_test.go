package kubedeploy

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/msbench/msbench/internal/study"
)

// A study that hard-codes loopback addresses or a system user is refused,
// each place named; addresses that only look alike are not.
func TestCheckRefusesLoopback(t *testing.T) {
	s := &study.Study{
		Name: "hostile",
		Services: []*study.Service{
			{Name: "cmd", Command: "server --listen 127.0.0.1:9000"},
			{Name: "env", Command: "server", Env: [][2]string{{"ADDR", "{addr}"}, {"PEER", "http://localhost:80/"}}},
			{Name: "ready", Command: "server", Ready: study.Ready{HTTP: "http://[::1]:80/healthz"}},
			{Name: "tcp", Command: "server", Ready: study.Ready{TCP: "127.1.2.3:80"}},
			{Name: "user", Command: "server", User: "postgres"},
			{Name: "fine", Command: "server --peer fe80::1 --via 10.127.0.0.1x --name localhostess", Env: [][2]string{{"A", "{service.x.addr}"}, {"V", "1127.0.0.1"}}},
		},
		Variants: []study.Axis{{Name: "impl", Values: []string{"a", "b"}, Attrs: map[string]map[string]string{"b": {"registry": "LOCALHOST:5000"}}}},
	}
	err := Check(s)
	if err == nil {
		t.Fatal("a hostile study passed")
	}
	for _, want := range []string{
		`service cmd: command hard-codes the loopback address "127.0.0.1"`,
		`service env: env PEER hard-codes the loopback address "localhost"`,
		`service ready: ready http hard-codes`,
		`service tcp: ready tcp hard-codes the loopback address "127.1.2.3"`,
		`service user runs as the system user "postgres"`,
		`variant impl=b: registry hard-codes the loopback address "LOCALHOST"`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
	if strings.Contains(err.Error(), "service fine") || strings.Contains(err.Error(), "env A") {
		t.Errorf("refused what is no loopback address:\n%v", err)
	}
}

// The repository's studies bind and dial their placeholders: all run on
// a cluster.
func TestCheckPassesTheStudies(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "..", "studies", "*", "study.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no studies: %v", err)
	}
	for _, f := range files {
		s, err := study.Load(f, "")
		if err != nil {
			t.Fatal(err)
		}
		if err := Check(s); err != nil {
			t.Error(err)
		}
	}
}
