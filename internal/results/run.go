package results

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
)

// Layout of a run directory:
//
//	provenance.json          machine, toolchains, commit, study, times
//	study.yaml               the study file as it was read
//	study.resolved.json      the study with its profile applied and defaults filled in
//	state.json               which steps are done, for --resume
//	runs/rep-N/VARIANT/STEP/ summary.json, records.parquet, warmup.json, resources.json,
//	                         events.json, collected.json (steps that have them)
//	runs/rep-N/VARIANT/      startup.json
//	logs/rep-N/VARIANT/      one log per service instance
//	report.html, report.md
//
// VARIANT is a variant's key; the A/A twin's is its base's key + "@aa"
// (study.TwinSuffix), e.g. runs/rep-1/gin@aa/.
type Run struct {
	Dir string

	mu    sync.Mutex
	state State
}

// State is what --resume needs: the steps already measured and the
// variants that failed.
type State struct {
	Study   string            `json:"study"`
	Profile string            `json:"profile"`
	Done    []string          `json:"done"`
	Failed  map[string]string `json:"failed"`
}

// Create makes a new run directory under root.
func Create(root, studyName, profile string, now time.Time) (*Run, error) {
	name := studyName
	if profile != "" {
		name += "-" + profile
	}
	dir := filepath.Join(root, element(name+"-"+now.Format("20060102-150405")))
	if err := os.MkdirAll(root, 0o755); err != nil {
		return nil, fmt.Errorf("results: %w", err)
	}
	if err := os.Mkdir(dir, 0o755); err != nil {
		return nil, fmt.Errorf("results: %w", err)
	}
	r := &Run{Dir: dir, state: State{Study: studyName, Profile: profile, Done: []string{}, Failed: map[string]string{}}}
	return r, r.saveState()
}

// Open continues an existing run directory.
func Open(dir string) (*Run, error) {
	st, err := stateFile.read(dir)
	if err != nil {
		return nil, fmt.Errorf("open run %s: %w", dir, err)
	}
	r := &Run{Dir: dir, state: st}
	if r.state.Failed == nil {
		r.state.Failed = map[string]string{}
	}
	return r, nil
}

// State returns a copy of the run's state.
func (r *Run) State() State {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.state
	s.Done = slices.Clone(s.Done)
	return s
}

// UnitKey names one measured step of one variant in one repetition.
func UnitKey(rep int, variant, step string) string {
	return fmt.Sprintf("rep-%d/%s/%s", rep, variant, step)
}

// StepDir is where a unit's files go.
func (r *Run) StepDir(rep int, variant, step string) StepDir {
	return StepDir(filepath.Join(string(r.VariantDir(rep, variant)), element(step)))
}

// VariantDir is where a variant's files of one repetition go.
func (r *Run) VariantDir(rep int, variant string) VariantDir {
	return VariantDir(filepath.Join(r.Dir, "runs", fmt.Sprintf("rep-%d", rep), element(variant)))
}

// LogDir is where a variant's service logs go for one repetition.
func (r *Run) LogDir(rep int, variant string) string {
	return filepath.Join(r.Dir, "logs", fmt.Sprintf("rep-%d", rep), element(variant))
}

// element keeps a name one path element of the directory it is joined to,
// whatever it holds, so that no name takes a file out of the run
// directory: the study file refuses such names, but what is written where
// must not depend on every caller having checked. A name that is one
// element is itself; any other is escaped (%2F for a slash, %2E for the
// dots of "." and "..", % alone for ""), which no name that is one element
// can be, as those hold no %.
func element(name string) string {
	if name != "" && name != "." && name != ".." && !strings.ContainsAny(name, "/%\x00") {
		return name
	}
	if name == "" {
		return "%"
	}
	return strings.ReplaceAll(url.PathEscape(name), ".", "%2E")
}

// IsDone reports whether a unit was measured.
func (r *Run) IsDone(key string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Contains(r.state.Done, key)
}

// MarkDone records a measured unit; it is written before the next begins.
func (r *Run) MarkDone(key string) error {
	r.mu.Lock()
	if !slices.Contains(r.state.Done, key) {
		r.state.Done = append(r.state.Done, key)
	}
	delete(r.state.Failed, key)
	r.mu.Unlock()
	return r.saveState()
}

// MarkFailed records why a unit (or a whole variant) could not be measured.
func (r *Run) MarkFailed(key, why string) error {
	r.mu.Lock()
	r.state.Failed[key] = why
	r.mu.Unlock()
	return r.saveState()
}

func (r *Run) saveState() error {
	r.mu.Lock()
	st := r.state
	st.Done = slices.Clone(st.Done)
	st.Failed = maps.Clone(st.Failed)
	r.mu.Unlock()
	return stateFile.write(r.Dir, st)
}

// ReadJSON decodes a JSON file of the run.
func ReadJSON(path string, v any) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// ErrNotARun says a directory holds no msbench run.
var ErrNotARun = errors.New("not an msbench results directory (no state.json)")

// Check verifies dir is a run directory.
func Check(dir string) error {
	if _, err := os.Stat(filepath.Join(dir, string(stateFile))); err != nil {
		return fmt.Errorf("%s: %w", dir, ErrNotARun)
	}
	return nil
}
