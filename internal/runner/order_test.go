package runner

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/msbench/msbench/internal/results"
	"github.com/msbench/msbench/internal/study"
)

func variantsNamed(names ...string) []study.Variant {
	var out []study.Variant
	for _, n := range names {
		out = append(out, study.Variant{Values: [][2]string{{"x", n}}})
	}
	return out
}

func TestOrderIsASeededPermutationPerRepetition(t *testing.T) {
	vs := variantsNamed("a", "b", "c", "d", "e")
	vs = append(vs, study.Variant{Values: vs[0].Values, Twin: true})
	want := keys(vs)
	slices.Sort(want)
	differs := false
	for seed := range uint64(50) {
		for rep := 1; rep <= 4; rep++ {
			got := keys(Order(seed, rep, vs))
			if !slices.Equal(got, keys(Order(seed, rep, vs))) {
				t.Fatalf("seed %d rep %d: two draws differ", seed, rep)
			}
			sorted := slices.Sorted(slices.Values(got))
			if !slices.Equal(sorted, want) {
				t.Fatalf("seed %d rep %d: %v is not a permutation of %v", seed, rep, got, want)
			}
			if rep > 1 && !slices.Equal(got, keys(Order(seed, 1, vs))) {
				differs = true
			}
		}
	}
	if !differs {
		t.Fatal("every repetition got the same order")
	}
	if !slices.Equal(keys(vs), []string{"a", "b", "c", "d", "e", "a@aa"}) {
		t.Fatalf("Order changed its argument: %v", keys(vs))
	}
	// A run replayed by a later msbench must get the same orders: this
	// pins the algorithm (PCG seeded with (seed, rep), Fisher–Yates).
	if got, golden := strings.Join(keys(Order(42, 1, vs)), " "), "b e c a a@aa d"; got != golden {
		t.Fatalf("Order(42, 1) = %s, was %s", got, golden)
	}
}

func TestOrderIsUniform(t *testing.T) {
	vs := variantsNamed("a", "b", "c")
	counts := map[string]int{}
	const draws = 6000
	for seed := range uint64(draws) {
		counts[strings.Join(keys(Order(seed, 1, vs)), "")]++
	}
	if len(counts) != 6 {
		t.Fatalf("orders drawn: %v", counts)
	}
	for order, n := range counts {
		if n < 800 || n > 1200 { // expected 1000, standard deviation 29
			t.Fatalf("order %s drawn %d times of %d: %v", order, n, draws, counts)
		}
	}
}

func TestResumeOfARunWithoutASeedKeepsTheMatrixOrder(t *testing.T) {
	s, err := study.Load("testdata/aa.yaml", "")
	if err != nil {
		t.Fatal(err)
	}
	r := &runner{opts: Options{Resume: "old-run"}, study: s}
	how, err := r.chooseOrder()
	if err != nil || !strings.Contains(how, "predates seeded orders") || r.prov.Seed != nil {
		t.Fatalf("%q %v", how, err)
	}
	for _, o := range r.prov.Order {
		if !slices.Equal(o, []string{"plain", "salted", "salted@aa"}) {
			t.Fatalf("order %v", r.prov.Order)
		}
	}
	seed := uint64(7)
	r = &runner{opts: Options{Resume: "old-run", Seed: &seed}, study: s}
	if _, err := r.chooseOrder(); !errors.Is(err, ErrSeedConflict) {
		t.Fatalf("a seed for a run that had none: %v", err)
	}
}

var orderLine = regexp.MustCompile(`(?m)^rep (\d+) order: (.*)$`)

// logOrders returns the orders a run log printed, per repetition.
func logOrders(log string) map[string]string {
	out := map[string]string{}
	for _, m := range orderLine.FindAllStringSubmatch(log, -1) {
		out[m[1]] = m[2]
	}
	return out
}

func runAA(t *testing.T, s *study.Study, seed *uint64, resume string, ctx context.Context, log io.Writer) (string, error) {
	t.Helper()
	opts := testOptions(t, log)
	opts.Seed, opts.Resume = seed, resume
	return Run(ctx, s, opts)
}

// runOnce runs s with seed, which must finish, and opens its results.
func runOnce(t *testing.T, s *study.Study, seed uint64) *results.Run {
	t.Helper()
	var log bytes.Buffer
	dir, err := runAA(t, s, &seed, "", context.Background(), &log)
	if err != nil {
		t.Fatalf("run: %v\n%s", err, log.String())
	}
	r, err := results.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// runThrice runs the A/A study's 3 repetitions with seed, all of which
// must finish.
func runThrice(t *testing.T, s *study.Study, seed uint64, log *bytes.Buffer) *results.Run {
	t.Helper()
	dir, err := runAA(t, s, &seed, "", context.Background(), log)
	if err != nil {
		t.Fatalf("run: %v\n%s", err, log.String())
	}
	r, err := results.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if done := r.State().Done; len(done) != 9 {
		t.Fatalf("done %v, want 3 repetitions of 3 runs", done)
	}
	return r
}

func TestAATwinRunsInReplayableOrders(t *testing.T) {
	s, err := study.Load("testdata/aa.yaml", "")
	if err != nil {
		t.Fatal(err)
	}
	runs := s.Runs()
	if len(runs) != 3 || runs[2].Key() != "salted@aa" {
		t.Fatalf("runs %v", keys(runs))
	}
	// A seed whose repetitions do not all share one order.
	seed := uint64(0)
	for ; slices.Equal(keys(Order(seed, 1, runs)), keys(Order(seed, 2, runs))) && slices.Equal(keys(Order(seed, 1, runs)), keys(Order(seed, 3, runs))); seed++ {
	}
	var log bytes.Buffer
	r := runThrice(t, s, seed, &log)
	dir := r.Dir
	for rep := 1; rep <= 3; rep++ {
		for _, key := range []string{"plain", "salted", "salted@aa"} {
			sum, err := r.StepDir(rep, key, "greet").ReadSummary()
			if err != nil || sum.Successes != 20 {
				t.Fatalf("rep %d %s: %+v %v", rep, key, sum, err)
			}
			if st, err := r.VariantDir(rep, key).ReadStartup(); st == nil || err != nil || len(st.Instances) != 1 {
				t.Fatalf("rep %d %s: startup %+v %v", rep, key, st, err)
			}
			if _, err := os.Stat(filepath.Join(dir, "logs", fmt.Sprintf("rep-%d", rep), key, "web.log")); err != nil {
				t.Fatal(err)
			}
		}
	}
	prov, err := r.ReadProvenance()
	if err != nil {
		t.Fatal(err)
	}
	if prov.Seed == nil || *prov.Seed != seed || len(prov.Order) != 3 {
		t.Fatalf("provenance seed %v order %v, want seed %d", prov.Seed, prov.Order, seed)
	}
	orders := logOrders(log.String())
	for rep := 1; rep <= 3; rep++ {
		want := keys(Order(seed, rep, runs))
		if !slices.Equal(prov.Order[rep-1], want) || orders[fmt.Sprint(rep)] != strings.Join(want, ", ") {
			t.Fatalf("rep %d: provenance %v, log %q, want %v", rep, prov.Order[rep-1], orders[fmt.Sprint(rep)], want)
		}
	}
	if orders["1"] == orders["2"] && orders["1"] == orders["3"] {
		t.Fatalf("seed %d: every repetition ran %s", seed, orders["1"])
	}
	// The variants ran in the order printed.
	var ran []string
	for _, m := range regexp.MustCompile(`rep (\d) · flavour=(\w+)( \(A/A twin\))?`).FindAllStringSubmatch(log.String(), -1) {
		key := m[2]
		if m[3] != "" {
			key += "@aa"
		}
		ran = append(ran, key)
	}
	if want := slices.Concat(prov.Order...); !slices.Equal(ran, want) {
		t.Fatalf("ran %v, want %v", ran, want)
	}

	// The same seed replays the same orders.
	var again bytes.Buffer
	dir2, err := runAA(t, s, &seed, "", context.Background(), &again)
	if err != nil {
		t.Fatalf("replay: %v\n%s", err, again.String())
	}
	r2, _ := results.Open(dir2)
	prov2, _ := r2.ReadProvenance()
	if got := logOrders(again.String()); !maps.Equal(got, orders) || !slices.EqualFunc(prov2.Order, prov.Order, slices.Equal) {
		t.Fatalf("replay with seed %d ran %v, first run %v", seed, got, orders)
	}
	if left := svcProcesses(t); len(left) > 0 {
		t.Fatalf("processes left running: %v", left)
	}
}

func TestResumeKeepsTheRecordedSeedAndTwin(t *testing.T) {
	s, err := study.Load("testdata/aa.yaml", "")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var log bytes.Buffer
	dir, err := runAA(t, s, nil, "", ctx, &cancelAfter{w: &log, marker: "greet [1/1]: ", cancel: cancel})
	if !errors.Is(err, ErrInterrupted) {
		t.Fatalf("want ErrInterrupted, got %v\n%s", err, log.String())
	}
	r, _ := results.Open(dir)
	prov, err := r.ReadProvenance()
	if err != nil || prov.Seed == nil {
		t.Fatalf("no seed drawn: %+v %v", prov, err)
	}
	if !strings.Contains(log.String(), fmt.Sprintf("seed %d, drawn at random (--seed %d replays it)", *prov.Seed, *prov.Seed)) {
		t.Fatalf("the log does not say the seed:\n%s", log.String())
	}
	if done := r.State().Done; len(done) != 1 {
		t.Fatalf("done after interrupt: %v", done)
	}
	first := logOrders(log.String())

	other := *prov.Seed + 1
	if _, err := runAA(t, s, &other, dir, context.Background(), &bytes.Buffer{}); !errors.Is(err, ErrSeedConflict) {
		t.Fatalf("resume with another seed: %v", err)
	}
	// Today's file turns the twin off; the run keeps the one it began with.
	data, _ := os.ReadFile("testdata/aa.yaml")
	off, err := study.Parse("testdata/aa.yaml", bytes.Replace(data, []byte("aa: salted"), []byte("aa: none"), 1), "")
	if err != nil || off.AA != "" {
		t.Fatalf("aa: none: %q %v", off.AA, err)
	}
	var resumed bytes.Buffer
	same := *prov.Seed
	if _, err := runAA(t, off, &same, dir, context.Background(), &resumed); err != nil {
		t.Fatalf("resume: %v\n%s", err, resumed.String())
	}
	if !strings.Contains(resumed.String(), fmt.Sprintf("seed %d, as the run recorded", *prov.Seed)) || strings.Count(resumed.String(), "already measured") != 1 {
		t.Fatalf("resumed log:\n%s", resumed.String())
	}
	if got := logOrders(resumed.String()); got["1"] != first["1"] || len(got) != 3 {
		t.Fatalf("resumed orders %v, first run's %v", got, first)
	}
	r, _ = results.Open(dir)
	if done := r.State().Done; len(done) != 9 || !r.IsDone(results.UnitKey(3, "salted@aa", "greet")) {
		t.Fatalf("done after resume: %v", done)
	}
	prov2, _ := r.ReadProvenance()
	if *prov2.Seed != *prov.Seed || !slices.EqualFunc(prov2.Order, prov.Order, slices.Equal) || len(prov2.ResumedAt) != 1 {
		t.Fatalf("provenance after resume: seed %d order %v, before %d %v", *prov2.Seed, prov2.Order, *prov.Seed, prov.Order)
	}
}
