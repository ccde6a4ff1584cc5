package fanout

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/msbench/msbench/internal/load"
	"github.com/msbench/msbench/internal/loadspec"
	"github.com/msbench/msbench/internal/results"
)

// Spec is what one generator is given, as a JSON file: the whole step's
// load, its share of it, when to start, and where it may send.
type Spec struct {
	Load  Load      `json:"load"`
	Share Share     `json:"share"`
	Start time.Time `json:"start"`
	// ClusterNetworks are the cluster's pod and service address ranges:
	// a target whose address lies in one is inside the cluster.
	ClusterNetworks []netip.Prefix `json:"cluster_networks,omitempty"`
	// AllowHosts are target hosts outside this machine and the cluster
	// that the study names explicitly; a name (not an address) inside the
	// cluster must be listed too, since only a literal address can be
	// checked before the load dials it.
	AllowHosts []string `json:"allow_hosts,omitempty"`
}

// Load is loadspec.Spec as a file holds it: its targets in words, since
// a load.Target's expected statuses are a bit set. Its AllowRemote is not
// read: where a generator may send is Spec's to say.
type Load struct {
	loadspec.Spec
	Targets []Target `json:"Targets"`
}

// Target is load.Target with its expected statuses as text ("200-299,304").
type Target struct {
	Name         string      `json:"name,omitempty"`
	Method       string      `json:"method,omitempty"`
	URL          string      `json:"url"`
	Header       [][2]string `json:"header,omitempty"`
	Body         []byte      `json:"body,omitempty"`
	Weight       int         `json:"weight,omitempty"`
	ExpectStatus string      `json:"expect_status,omitempty"` // empty: 2xx
	ExpectBody   []byte      `json:"expect_body,omitempty"`
}

// Specs are the n generators' specs for one step's load, all to start at
// start: the runner writes each where its generator reads it.
func Specs(spec loadspec.Spec, n int, start time.Time, clusterNetworks []netip.Prefix, allowHosts []string) ([]Spec, error) {
	ld := Load{Spec: spec}
	for _, t := range spec.Targets {
		ld.Targets = append(ld.Targets, Target{Name: t.Name, Method: t.Method, URL: t.URL, Header: t.Header, Body: t.Body,
			Weight: t.Weight, ExpectStatus: statusText(t.ExpectStatus), ExpectBody: t.ExpectBody})
	}
	out := make([]Spec, n)
	for k := range out {
		out[k] = Spec{Load: ld, Share: Share{k, n}, Start: start, ClusterNetworks: clusterNetworks, AllowHosts: allowHosts}
		// Refused here rather than on n machines.
		if _, err := out[k].config(); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// ReadSpec reads a generator's spec from a file, or from stdin for "-".
// From stdin it reads the one JSON value and no further, so the sender
// may keep stdin open (generate --out - waits for its end to learn that
// its output arrived).
func ReadSpec(path string, stdin io.Reader) (Spec, error) {
	r := stdin
	if path != "-" {
		data, err := os.ReadFile(path)
		if err != nil {
			return Spec{}, fmt.Errorf("generator spec: %w", err)
		}
		r = bytes.NewReader(data)
	}
	var s Spec
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return Spec{}, fmt.Errorf("generator spec %s: %w", path, err)
	}
	return s, nil
}

// specFile is where a generator's output keeps the spec it ran, which
// Merge reads to check that the outputs are the shares of one load.
const specFile = "generator.json"

func writeSpec(dir results.StepDir, s Spec) error {
	return results.WriteJSON(filepath.Join(string(dir), specFile), s)
}

// config is the engine configuration of the spec's share, its targets
// checked: see allowed.
func (s Spec) config() (load.Config, error) {
	ls := s.Load.Spec
	ls.Targets = nil
	remote := false
	for i, t := range s.Load.Targets {
		lt := load.Target{Name: t.Name, Method: t.Method, URL: t.URL, Header: t.Header, Body: t.Body, Weight: t.Weight, ExpectBody: t.ExpectBody}
		if t.ExpectStatus != "" {
			set, err := load.ParseStatusSet(t.ExpectStatus)
			if err != nil {
				return load.Config{}, fmt.Errorf("target %d: %w", i+1, err)
			}
			lt.ExpectStatus = set
		}
		far, err := s.allowed(t.URL)
		if err != nil {
			return load.Config{}, fmt.Errorf("target %d: %w", i+1, err)
		}
		remote = remote || far
		ls.Targets = append(ls.Targets, lt)
	}
	// The engine's own check allows loopback alone; what lies beyond was
	// checked here.
	ls.AllowRemote = remote
	return Config(ls, s.Share, s.Start)
}

// allowed refuses a target that is neither on this machine, nor at an
// address inside the cluster, nor named in AllowHosts: a generator pod
// must not load whatever a typo in a study points it at. far says that
// the target is allowed beyond loopback.
func (s Spec) allowed(rawURL string) (far bool, err error) {
	u, err := load.ValidateURL(rawURL)
	if err != nil {
		return false, err
	}
	host := u.Hostname()
	if slices.Contains(s.AllowHosts, host) {
		return true, nil
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		// A name: the engine accepts it only if every address it names
		// is loopback.
		return false, nil
	}
	ip = ip.Unmap()
	if ip.IsLoopback() {
		return false, nil
	}
	for _, p := range s.ClusterNetworks {
		if p.Contains(ip) {
			return true, nil
		}
	}
	return false, fmt.Errorf("%s is neither on this machine nor inside the cluster (%s): a generator loads another host only when the study names it", host, networks(s.ClusterNetworks))
}

func networks(ps []netip.Prefix) string {
	if len(ps) == 0 {
		return "no cluster network given"
	}
	var out []string
	for _, p := range ps {
		out = append(out, p.String())
	}
	return strings.Join(out, ", ")
}

// statusText writes a status set as ParseStatusSet reads it, in ranges;
// "" for the empty set, which the engine reads as 2xx.
func statusText(set load.StatusSet) string {
	var parts []string
	for c := 100; c < 600; c++ {
		if !set.Has(c) {
			continue
		}
		end := c
		for end+1 < 600 && set.Has(end+1) {
			end++
		}
		if end == c {
			parts = append(parts, strconv.Itoa(c))
		} else {
			parts = append(parts, strconv.Itoa(c)+"-"+strconv.Itoa(end))
		}
		c = end
	}
	return strings.Join(parts, ",")
}
