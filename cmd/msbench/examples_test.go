package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/msbench/msbench/internal/results"
	"github.com/msbench/msbench/internal/study"
)

// An example command of a --help text or of a README's sh blocks.
type example struct {
	where string // "msbench run --help" or "studies/ipc/README.md:42"
	line  string
}

// Every example command the --help texts and the READMEs' sh blocks show
// runs here, as Go's example tests do, so that none drifts from the CLI (a
// study file that moved, a flag renamed): run studies/faas-gateway.yaml
// once did. Each runs through msbench's real command line with its context
// already cancelled, so that it checks its flags and inputs as given and
// then stops as an interrupted command does, before anything heavy: run
// begins no run, deps up gives up before a server runs, load sends at
// most a request or two to a local test server; report, compare and
// clean, cheap, run whole. What the repository provides (studies, their
// files and profiles) must exist as named; what a user makes (results
// directories, a file to upload) is stood in for by samples.
func TestEveryExampleRuns(t *testing.T) {
	examples := helpExamples(t)
	readmes, err := filepath.Glob("../../studies/*/README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, file := range append([]string{"../../README.md"}, readmes...) {
		found := readmeExamples(t, file)
		if len(found) == 0 && file == "../../README.md" {
			t.Fatal("README.md's sh blocks show no msbench command")
		}
		examples = append(examples, found...)
	}
	names, err := study.List("../../studies")
	if err != nil || len(names) == 0 {
		t.Fatalf("studies: %v %v", names, err)
	}
	sample := sampleRun(t)
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer srv.Close()
	sandbox := newSandbox(t, sample)
	t.Chdir(sandbox)
	interrupted, cancel := context.WithCancel(context.Background())
	cancel()
	for _, ex := range examples {
		words, err := shellWords(ex.line)
		if err != nil {
			t.Errorf("%s: %q: %v", ex.where, ex.line, err)
			continue
		}
		commands := [][]string{words}
		if strings.Contains(ex.where, "README.md:") {
			commands = expand(words, names)
		}
		for _, args := range commands {
			args = args[1:] // msbench or bin/msbench
			t.Run(ex.where+": "+strings.Join(args, " "), func(t *testing.T) {
				made := stageInputs(t, args, sample, srv.Listener.Addr().String())
				before := resultsIn(t)
				var stdout, stderr bytes.Buffer
				// 0 for what is cheap to do whole (report, compare, clean),
				// 130 for what stops at the cancelled context.
				if code := run(interrupted, args, &stdout, &stderr); code != 0 && code != 130 {
					t.Errorf("%s: %q as msbench %q: exit %d\n%s", ex.where, ex.line, args, code, stderr.String())
				}
				// A run that went on past its checks would have begun a
				// run directory.
				for _, dir := range resultsIn(t) {
					if !slices.Contains(before, dir) && !slices.Contains(made, dir) {
						t.Errorf("%s: %q wrote %s: it did more than check its inputs", ex.where, ex.line, dir)
					}
				}
			})
		}
	}
}

// helpExamples are the lines of every command's --help that start with
// msbench, past its usage line.
func helpExamples(t *testing.T) []example {
	t.Helper()
	var out []example
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		path := strings.Fields(c.CommandPath())[1:]
		var stdout, stderr bytes.Buffer
		if code := run(context.Background(), append(path, "--help"), &stdout, &stderr); code != 0 {
			t.Fatalf("msbench %s --help: exit %d\n%s", strings.Join(path, " "), code, stderr.String())
		}
		found := 0
		usage := false
		for line := range strings.Lines(stdout.String()) {
			line = strings.TrimSpace(line)
			switch {
			case line == "Usage:":
				usage = true
			case line == "":
				usage = false
			case !usage && isExample(line):
				out = append(out, example{c.CommandPath() + " --help", line})
				found++
			}
		}
		if c.Example != "" && found == 0 {
			t.Errorf("%s has examples, but none was found in its --help:\n%s", c.CommandPath(), stdout.String())
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(newRoot())
	return out
}

// readmeExamples are the lines of a README's sh blocks that start with
// msbench or bin/msbench.
func readmeExamples(t *testing.T, file string) []example {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []example
	inSh := false
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		switch {
		case strings.HasPrefix(line, "```"):
			inSh = !inSh && line == "```sh"
		case inSh && isExample(line):
			out = append(out, example{fmt.Sprintf("%s:%d", strings.TrimPrefix(file, "../../"), n), line})
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func isExample(line string) bool {
	return strings.HasPrefix(line, "msbench ") || strings.HasPrefix(line, "bin/msbench ")
}

// shellWords splits a command line as sh does with the quoting examples
// use: single and double quotes, backslashes, and a # starting a word
// begins a comment.
func shellWords(line string) ([]string, error) {
	var words []string
	var w strings.Builder
	inWord := false
	var quote rune
	escaped := false
	for _, r := range line {
		switch {
		case escaped:
			w.WriteRune(r)
			escaped = false
		case quote != 0 && r == quote:
			quote = 0
		case quote == '\'':
			w.WriteRune(r)
		case r == '\\':
			escaped, inWord = true, true
		case quote != 0:
			w.WriteRune(r)
		case r == '\'' || r == '"':
			quote, inWord = r, true
		case r == ' ' || r == '\t':
			if inWord {
				words = append(words, w.String())
				w.Reset()
				inWord = false
			}
		case r == '#' && !inWord:
			return words, nil
		default:
			w.WriteRune(r)
			inWord = true
		}
	}
	if quote != 0 || escaped {
		return nil, errors.New("unterminated quote or escape")
	}
	if inWord {
		words = append(words, w.String())
	}
	return words, nil
}

// expand turns a README's schematic line into the commands it
// stands for: [flags] stands for none; every other [optional part], with
// or without "..." after it, is left out and put in once; a|b is each of
// a and b; STUDY is each study; URL, BASE and NEW are sample values.
func expand(words, studies []string) [][]string {
	// Each slot of the line is one of its choices: words to put in.
	var slots [][][]string
	for i := 0; i < len(words); i++ {
		w := words[i]
		if !strings.HasPrefix(w, "[") {
			slots = append(slots, choices(w, studies))
			continue
		}
		var group [][][]string
		for ; i < len(words); i++ {
			w := strings.TrimPrefix(words[i], "[")
			end := strings.HasSuffix(w, "]") || strings.HasSuffix(w, "]...")
			w = strings.TrimSuffix(strings.TrimSuffix(w, "..."), "]")
			if w != "flags" {
				group = append(group, choices(w, studies))
			}
			if end {
				break
			}
		}
		optional := [][]string{nil}
		if len(group) > 0 {
			optional = append(optional, cartesian(group)...)
		}
		slots = append(slots, optional)
	}
	return cartesian(slots)
}

// cartesian is every sequence made of one choice of each slot.
func cartesian(slots [][][]string) [][]string {
	out := [][]string{nil}
	for _, slot := range slots {
		var next [][]string
		for _, prefix := range out {
			for _, c := range slot {
				next = append(next, append(append([]string(nil), prefix...), c...))
			}
		}
		out = next
	}
	return out
}

// choices are what one schematic word stands for, each a word.
func choices(w string, studies []string) [][]string {
	var out [][]string
	for _, alt := range strings.Split(w, "|") {
		switch alt {
		case "STUDY":
			for _, s := range studies {
				out = append(out, []string{s})
			}
		case "URL":
			out = append(out, []string{"http://127.0.0.1:8080/"})
		case "BASE", "NEW":
			out = append(out, []string{"results/" + strings.ToLower(alt)})
		default:
			out = append(out, []string{alt})
		}
	}
	return out
}

// sampleRun is a run directory of the hello study, two repetitions: what
// an example's results/… directory stands for.
func sampleRun(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"run", "testdata/studies/hello/study.yaml", "--root", "../..", "--results", dir, "--repetitions", "2"}, &stdout, &stderr)
	if code != 0 {
		t.Fatalf("the sample run: exit %d\n%s", code, stderr.String())
	}
	runs, err := filepath.Glob(filepath.Join(dir, "hello-*"))
	if err != nil || len(runs) != 1 {
		t.Fatalf("the sample run: %v %v", runs, err)
	}
	// The sample stands for a run on a quiet machine. On this one, busy
	// with other tests, its steps may fail the noise audit, and compare
	// --noise would then find no A/A pair in it.
	steps, err := filepath.Glob(filepath.Join(runs[0], "runs", "rep-*", "*", "*", "audit.json"))
	if err != nil || len(steps) == 0 {
		t.Fatalf("the sample run's audits: %v %v", steps, err)
	}
	for _, file := range steps {
		step := results.StepDir(filepath.Dir(file))
		a, err := step.ReadAudit()
		if err != nil {
			t.Fatal(err)
		}
		a.OK, a.Reasons = true, []string{}
		if err := step.WriteAudit(*a); err != nil {
			t.Fatal(err)
		}
	}
	return runs[0]
}

// newSandbox is a checkout to run the examples in: the repository's
// go.mod and studies/, and results/ with the sample run in it, so that
// nothing an example does reaches the repository's own results.
func newSandbox(t *testing.T, sample string) string {
	t.Helper()
	dir := t.TempDir()
	for _, name := range []string{"go.mod", "studies"} {
		target, err := filepath.Abs(filepath.Join("../..", name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.CopyFS(filepath.Join(dir, "results", filepath.Base(sample)), os.DirFS(sample)); err != nil {
		t.Fatal(err)
	}
	return dir
}

// outputs are the flags whose value is a path a command makes, not reads.
var outputs = map[string]bool{"--out": true, "--results": true, "--logs": true}

// resultsIn lists the directories in the working directory's results/.
func resultsIn(t *testing.T) []string {
	t.Helper()
	entries, err := os.ReadDir("results")
	if err != nil {
		t.Fatal(err)
	}
	var dirs []string
	for _, e := range entries {
		if e.IsDir() {
			dirs = append(dirs, filepath.Join("results", e.Name()))
		}
	}
	return dirs
}

// stageInputs stands in for what a user would have made before running
// args: every results/… directory it reads is a copy of the sample run,
// a file it sends from the working directory (@name) is a few bytes, and
// every URL, which must be on loopback, goes to addr instead. It returns
// the results/… directories args makes.
func stageInputs(t *testing.T, args []string, sample, addr string) (made []string) {
	t.Helper()
	for i, arg := range args {
		value := arg
		if _, v, ok := strings.Cut(arg, "="); ok && strings.HasPrefix(arg, "-") {
			value = v
		}
		switch {
		case i > 0 && outputs[args[i-1]]:
			made = append(made, filepath.Clean(value))
		case strings.HasPrefix(value, "http://") || strings.HasPrefix(value, "https://"):
			u, err := url.Parse(value)
			if err != nil {
				t.Fatalf("%q: %v", value, err)
			}
			if h := u.Hostname(); h != "127.0.0.1" && h != "localhost" && h != "::1" {
				t.Fatalf("%q: an example must target loopback", value)
			}
			u.Host = addr
			args[i] = strings.Replace(arg, value, u.String(), 1)
		case strings.HasPrefix(value, "results/") && value != "results/":
			if _, err := os.Stat(value); errors.Is(err, os.ErrNotExist) {
				if err := os.CopyFS(value, os.DirFS(sample)); err != nil {
					t.Fatal(err)
				}
			}
		}
		if _, file, ok := strings.Cut(value, "@"); ok && filepath.Dir(file) == "." {
			if _, err := os.Stat(file); errors.Is(err, os.ErrNotExist) {
				if err := os.WriteFile(file, []byte("sample"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	return made
}
