package results

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"runtime/debug"
	"strings"
	"time"
)

// Provenance says what produced a run, so that numbers can be trusted and
// compared later.
type Provenance struct {
	Study          string            `json:"study"`
	Profile        string            `json:"profile"`
	StudyFile      string            `json:"study_file"`
	GitCommit      string            `json:"git_commit"`
	GitDirty       bool              `json:"git_dirty"`
	CPUModel       string            `json:"cpu_model"`
	Cores          int               `json:"cores"`
	Kernel         string            `json:"kernel"`
	MemoryBytes    int64             `json:"memory_bytes"`
	Toolchains     map[string]string `json:"toolchains"`
	Libraries      map[string]string `json:"libraries"`
	ResourceMethod string            `json:"resource_accounting"`
	Builds         map[string]string `json:"builds"` // name → source hash
	CommandLine    []string          `json:"command_line"`
	StartedAt      time.Time         `json:"started_at"`
	EndedAt        time.Time         `json:"ended_at,omitempty"`
	Interrupted    bool              `json:"interrupted,omitempty"`
	ResumedAt      []time.Time       `json:"resumed_at,omitempty"`
	// Datasets are the input files the services were given, by the
	// study's dataset name.
	Datasets map[string]DatasetFile `json:"datasets,omitempty"`
	// Seed drew the order of the variants in every repetition (msbench
	// run --seed replays it); nil in runs made before orders were drawn,
	// which ran the matrix in order.
	Seed *uint64 `json:"seed,omitempty"`
	// Order lists, per repetition, the variant keys in the order they ran
	// (an A/A twin as KEY@aa).
	Order [][]string `json:"order,omitempty"`
	// Stopped says why a run that adds repetitions until its intervals
	// are narrow enough (msbench run --target-width) stopped adding them.
	Stopped string `json:"stopped,omitempty"`
	// Sources names, for a run whose variants came from several checkouts
	// (msbench ab), what each was built from, keyed by its value on the
	// axis that tells them apart: base → "origin/main (3f2a1b09c4d1)".
	Sources map[string]string `json:"sources,omitempty"`
	// Placement is which cores the generator and each service and
	// dependency were given; nil in runs made before placement.
	Placement *Placement `json:"placement,omitempty"`
	// Cluster is the Kubernetes cluster the variants ran on; nil for a
	// run on this machine.
	Cluster *Cluster `json:"cluster,omitempty"`
}

// Cluster is what a run on a Kubernetes cluster records of it.
type Cluster struct {
	ServerVersion string        `json:"server_version"`
	Platform      string        `json:"platform"`
	Nodes         []ClusterNode `json:"nodes"`
	Namespace     string        `json:"namespace,omitempty"`
	Generators    int           `json:"generators,omitempty"`
	// Images are the references (by digest) of what ran: VARIANT/SERVICE,
	// "dependency KIND", "generator".
	Images map[string]string `json:"images,omitempty"`
	// Accounting is how each container's CPU and memory were measured.
	Accounting string `json:"accounting,omitempty"`
	// Granted is what the cluster gave each service's pods, by service:
	// their QoS class and CPU, against what the placement asked.
	Granted map[string]string `json:"granted,omitempty"`
	// Hosts says on which node each of the study's hosts ran, and the
	// generators (kubehosts.Assignment.Summary); "" without hosts.
	Hosts string `json:"hosts,omitempty"`
}

// ClusterNode is one node as its kubelet reports it.
type ClusterNode struct {
	Name string `json:"name"`
	// CPUs and MemoryBytes are the node's capacity; the allocatable
	// amounts are what pods may have of it.
	CPUs                   float64 `json:"cpus"`
	AllocatableCPUs        float64 `json:"allocatable_cpus"`
	MemoryBytes            int64   `json:"memory_bytes"`
	AllocatableMemoryBytes int64   `json:"allocatable_memory_bytes"`
	ContainerRuntime       string  `json:"container_runtime"`
	Kubelet                string  `json:"kubelet"`
	OSImage                string  `json:"os_image"`
	Kernel                 string  `json:"kernel"`
	Architecture           string  `json:"architecture"`
	// InstanceType and Zone are the cloud's well-known labels, where set.
	InstanceType string `json:"instance_type,omitempty"`
	Zone         string `json:"zone,omitempty"`
}

// String is the cluster in a line: its version and nodes.
func (c Cluster) String() string {
	var nodes []string
	for _, n := range c.Nodes {
		nodes = append(nodes, fmt.Sprintf("%s (%g CPUs, %.1f GiB, %s)", n.Name, n.CPUs, float64(n.MemoryBytes)/(1<<30), n.ContainerRuntime))
	}
	return fmt.Sprintf("Kubernetes %s, nodes %s", c.ServerVersion, strings.Join(nodes, ", "))
}

// Where a dataset came from.
const (
	DatasetShared    = "shared"    // the shared data directory's file
	DatasetGenerated = "generated" // the study's stand-in, the shared file being absent
)

// DatasetFile is the file a dataset resolved to.
type DatasetFile struct {
	Path   string `json:"path"`
	Source string `json:"source"` // DatasetShared or DatasetGenerated
	Bytes  int64  `json:"bytes"`
	SHA256 string `json:"sha256"`
}

// What a run's placement came from.
const (
	PlacementDefault = "default" // the study gives none: generator on the first core, the rest on the others
	PlacementNone    = "none"    // placement: none
	PlacementStudy   = "study"   // the study's placement:, the default where it says nothing
)

// Placement is the cores of a run's processes.
type Placement struct {
	Asked     string          `json:"asked"`          // PlacementDefault, PlacementNone or PlacementStudy
	Available string          `json:"available_cpus"` // the cores msbench could use, e.g. "0-1"
	Processes []PlacedProcess `json:"processes"`
	// BootLent are the cores no service runs on (the generator's), lent
	// to deployments' services for their boot: a repetition's
	// deployments booted two at a time, the second's services there,
	// each moved to its own cores once ready. "" when none was.
	BootLent string `json:"boot_lent,omitempty"`
}

// Kinds of placed process.
const (
	PlacedGenerator  = "generator"
	PlacedService    = "service"
	PlacedDependency = "dependency"
)

// PlacedProcess is where one process (the first of a service's replicas
// or of a dependency's processes) was placed.
type PlacedProcess struct {
	Name string `json:"name"`
	Kind string `json:"kind"` // PlacedGenerator (msbench itself), PlacedService or PlacedDependency
	// Asked is the study's value ("0-1", "all"); "" where it gave none.
	Asked string `json:"asked"`
	// CPUs is where the process was to go, "" for every core (not placed).
	CPUs string `json:"cpus"`
	// Applied is where the kernel let it run once started: its
	// Cpus_allowed_list.
	Applied string `json:"applied"`
	// Method is cpuset (a cgroup cpuset, and CPU affinity from the fork
	// on), affinity (sched_setaffinity on every thread) or none.
	Method string `json:"method"`
}

// Machine fills in what describes this machine and this msbench.
func Machine(ctx context.Context, repo string) Provenance {
	p := Provenance{
		Cores:      runtime.NumCPU(),
		Toolchains: map[string]string{"msbench-go": runtime.Version()},
		Libraries:  map[string]string{},
		Builds:     map[string]string{},
	}
	p.CPUModel = firstField("/proc/cpuinfo", "model name")
	if v, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		p.Kernel = strings.TrimSpace(string(v))
	}
	if kb := firstField("/proc/meminfo", "MemTotal"); kb != "" {
		var n int64
		for _, c := range strings.TrimSuffix(kb, " kB") {
			if c >= '0' && c <= '9' {
				n = n*10 + int64(c-'0')
			}
		}
		p.MemoryBytes = n * 1024
	}
	for name, args := range map[string][]string{
		"go":    {"go", "version"},
		"java":  {"java", "-version"},
		"node":  {"node", "--version"},
		"maven": {"mvn", "--version"},
	} {
		if v := output(ctx, "", args...); v != "" {
			p.Toolchains[name] = v
		}
	}
	p.GitCommit = output(ctx, repo, "git", "rev-parse", "HEAD")
	p.GitDirty = output(ctx, repo, "git", "status", "--porcelain", "--untracked-files=no") != ""
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, dep := range info.Deps {
			p.Libraries[dep.Path] = dep.Version
		}
	}
	return p
}

// output runs a version command and keeps its first line.
func output(ctx context.Context, dir string, args ...string) string {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, args[0], args[1:]...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		return ""
	}
	line, _, _ := strings.Cut(strings.TrimSpace(ansi.ReplaceAllString(string(out), "")), "\n")
	return line
}

// ansi matches terminal colour codes, which some tools print even to a pipe.
var ansi = regexp.MustCompile(`\x1b\[[0-9;]*m`)

func firstField(path, key string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(k) == key {
			return strings.TrimSpace(v)
		}
	}
	return ""
}
