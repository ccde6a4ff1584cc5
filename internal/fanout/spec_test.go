package fanout

import (
	"encoding/json"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/msbench/msbench/internal/load"
	"github.com/msbench/msbench/internal/loadspec"
	"github.com/msbench/msbench/internal/pacer"
)

func TestStatusText(t *testing.T) {
	for _, text := range []string{"200-299", "200,204,304", "100-599", "301-302,404,500-503"} {
		set, err := load.ParseStatusSet(text)
		if err != nil {
			t.Fatal(err)
		}
		if got := statusText(set); got != text {
			t.Errorf("%q written as %q", text, got)
		}
	}
	if got := statusText(load.StatusSet{}); got != "" {
		t.Errorf("the empty set written as %q", got)
	}
}

// TestTargetsAllowed: a generator loads this machine, an address inside
// the cluster, or a host the study names; nothing else.
func TestTargetsAllowed(t *testing.T) {
	cluster := []netip.Prefix{netip.MustParsePrefix("10.244.0.0/16"), netip.MustParsePrefix("10.96.0.0/12")}
	tests := []struct {
		url   string
		allow []string
		far   bool
		err   string
	}{
		{url: "http://127.0.0.1:8080/"},
		{url: "http://[::1]:8080/"},
		{url: "http://localhost:8080/"}, // the engine checks what it names
		{url: "http://10.244.1.7:8080/", far: true},
		{url: "http://10.96.0.10/", far: true},
		{url: "http://192.0.2.1/", err: "neither on this machine nor inside the cluster (10.244.0.0/16, 10.96.0.0/12)"},
		{url: "http://10.245.0.1/", err: "neither"},
		{url: "http://192.0.2.1/", allow: []string{"192.0.2.1"}, far: true},
		{url: "http://api.example.test/", allow: []string{"api.example.test"}, far: true},
		{url: "ftp://127.0.0.1/", err: "scheme"},
	}
	for _, tt := range tests {
		s := Spec{ClusterNetworks: cluster, AllowHosts: tt.allow}
		far, err := s.allowed(tt.url)
		switch {
		case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
			t.Errorf("%s: error %v, want one saying %q", tt.url, err, tt.err)
		case tt.err == "" && err != nil:
			t.Errorf("%s: %v", tt.url, err)
		case far != tt.far:
			t.Errorf("%s: allowed beyond loopback %v, want %v", tt.url, far, tt.far)
		}
	}
	// Outside a cluster, nothing but loopback.
	if _, err := (Spec{}).allowed("http://10.244.1.7/"); err == nil || !strings.Contains(err.Error(), "no cluster network given") {
		t.Errorf("an address with no cluster given: %v", err)
	}
	// A name the engine would resolve elsewhere is still refused by it.
	spec := loadspec.Spec{Users: 1, Iterations: 1, Targets: []load.Target{{URL: "http://nowhere.invalid/"}}}
	specs, err := Specs(spec, 1, time.Now(), cluster, nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := specs[0].config()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.AllowRemote {
		t.Error("a name not in allow_hosts lifts the engine's loopback check")
	}
}

// TestSpecFile: a spec written for a generator and read back resolves to
// the configuration it was made from, targets and statuses included.
func TestSpecFile(t *testing.T) {
	minSuccess := 0.5
	status, _ := load.ParseStatusSet("200,304")
	spec := loadspec.Spec{Open: true, Rate: 200, Stages: []pacer.Stage{{Duration: time.Second, Target: 400}}, Arrivals: pacer.Poisson, Pacing: load.Coarse, Seed: 9,
		Connections: 8, Timeout: 3 * time.Second, MinSuccess: &minSuccess, TagHeader: "X-Version",
		Targets: []load.Target{{Name: "get", URL: "http://127.0.0.1:9/a", Header: [][2]string{{"Accept", "*/*"}}, ExpectStatus: status, ExpectBody: []byte("ok"), Weight: 3},
			{Name: "post", Method: "POST", URL: "http://127.0.0.1:9/b", Body: []byte{0, 1, 2}}}}
	start := time.Now().Add(time.Minute).Round(0)
	specs, err := Specs(spec, 2, start, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "spec.json")
	data, err := json.Marshal(specs[1])
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	read, err := ReadSpec(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := read.config()
	if err != nil {
		t.Fatal(err)
	}
	want, err := Config(spec, Share{1, 2}, start)
	if err != nil {
		t.Fatal(err)
	}
	if !got.Start.Equal(want.Start) || got.Connections != want.Connections || got.MinSuccess != want.MinSuccess || got.Tick != want.Tick || got.TagHeader != want.TagHeader || got.Timeout != want.Timeout {
		t.Errorf("read back as %+v, want %+v", got, want)
	}
	if g, w := offsets(got.Pacer), offsets(want.Pacer); len(g) != len(w) || len(g) == 0 || g[len(g)-1] != w[len(w)-1] {
		t.Errorf("read back with %d arrivals, want %d, the same", len(g), len(w))
	}
	for i, tg := range got.Targets {
		w := spec.Targets[i]
		if tg.URL != w.URL || tg.Method != w.Method || string(tg.Body) != string(w.Body) || tg.ExpectStatus != w.ExpectStatus || string(tg.ExpectBody) != string(w.ExpectBody) || tg.Weight != w.Weight || len(tg.Header) != len(w.Header) {
			t.Errorf("target %d read back as %+v, want %+v", i, tg, w)
		}
	}
	if err := os.WriteFile(path, []byte(`{"share":{"index":0,"of":1},"stray":1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadSpec(path, nil); err == nil || !strings.Contains(err.Error(), "stray") {
		t.Errorf("a spec with an unknown field: %v", err)
	}
}
