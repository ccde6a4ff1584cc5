// Package studyimage plans and builds the images a study's services run in
// on a Kubernetes cluster, by the "same paths" rule: a service's image holds
// everything its command needs at the same absolute paths as on this
// machine — its build outputs, datasets, the files under the repository it
// names and the toolchain it executes — so that the study's placeholders
// ({build.X}, {root}, {dataset.X}) resolve to the same strings in the pod,
// and the command runs unchanged through `/bin/sh -c "exec COMMAND"` in the
// same working directory, as the runner runs it here.
//
// A backend calls it so:
//
//	lab, _ := runner.OpenLab(ctx, s, opts)          // builds, datasets
//	specs, err := studyimage.Plan(s, nil, lab.Values())
//	bases, err := studyimage.ParseBases("java=eclipse-temurin:25-jre") // a flag's value
//	built, err := bases.Build(ctx, &image.Store{Dir: ".cache/images"}, specs)
//	for _, b := range built {
//		file, err := b.WriteArchive(dir)           // ctr -n k8s.io images import FILE
//		// or b.Image.Push(ctx, ref) for a registry
//	}
//	ref := studyimage.For(built, variant.Key(), "gateway").Ref
//	// pod: image ref, imagePullPolicy Never, command
//	// ["/bin/sh", "-c", "exec " + COMMAND] (COMMAND resolved as the runner
//	// does), the image's working directory, env as the runner sets it
//	// (TMPDIR={tmp} first, then the service's env; PATH is the image's),
//	// and a writable directory at {tmp}'s path (an emptyDir), which no
//	// image holds.
//	gen, err := studyimage.Generator(ctx, store, root) // msbench generate
//
// An image's base is Debian's minbase (debootstrap, cached by image.Store)
// unless one is configured for its language (Bases, which says what a
// configured base replaces): the Go services are dynamically linked
// against glibc (cgo is on here), every command starts with /bin/sh, and
// the build outputs' scripts run bash, env and dirname. Its one layer is
// the same for every image, so a node stores it once.
package studyimage

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/msbench/msbench/internal/placeholder"
	"github.com/msbench/msbench/internal/study"
	"github.com/msbench/msbench/internal/toolchain"
)

// Path is a host file or directory an image holds at the same path, and
// what needs it.
type Path struct {
	Path string
	Why  string // e.g. "build faas", "dataset universities", "node on PATH"
	// Runtime says the path is there only as this machine's installation
	// of the runtime the service runs by name (node, or java and its JDK):
	// a base configured for the image's language provides that instead.
	Runtime bool
}

// The languages of images, which pick their base (Bases).
const (
	Java   = "java"   // a JDK: java run by name, or one a script finds
	Node   = "node"   // node run by name
	Python = "python" // python3 run by name
	Native = "native" // none of those: compiled binaries and shell scripts
)

// Languages are the languages an image can have, a base configured for
// each.
var Languages = []string{Java, Native, Node, Python}

// Use is one service of one variant that runs in an image.
type Use struct {
	Variant string // study.Variant.Key()
	Service string
}

// Spec is one image: Debian's minbase with Packages, the host Paths at the
// same paths, Dir as its working directory and Env (a PATH reaching a host
// runtime outside the usual directories, else none).
type Spec struct {
	Name string // STUDY-SERVICE of its first use
	// Language is Java, Node, Python or Native: the runtime the service
	// needs, Java first when it needs more than one, whose configured base
	// the image takes.
	Language string
	// Runtimes are the languages whose runtimes the service runs by name
	// (node, java, python3), which the Packages, the Paths marked Runtime
	// and Env are there for.
	Runtimes []string
	Packages []string
	Paths    []Path
	Dir      string
	Env      []string
	Uses     []Use // every service of every variant that runs in it
}

// basePATH is the PATH of image.Store.Debian's bases.
const basePATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// tmpStandIn stands for {tmp} while planning: a service's private
// directory, which the backend gives each pod (an emptyDir at the path the
// runner would use); no image holds it.
const tmpStandIn = "/msbench-plan-tmp"

// baseProgram are what the minbase base provides that a command or a
// script's #! line may run by name.
var baseProgram = []string{"sh", "bash", "dash", "env"}

// Plan lists the images the services of the study's variants (nil: every
// variant of the matrix) need, from the lab's values (runner.Lab.Values:
// root, data, build.NAME, dataset.NAME, tokens). Services that need the
// same files share one image. An error names the service and what it needs
// that this machine cannot give.
func Plan(s *study.Study, variants []study.Variant, values map[string]string) ([]Spec, error) {
	if variants == nil {
		variants = s.Matrix()
	}
	var specs []Spec
	byKey := map[string]int{}
	for _, v := range variants {
		vals, err := planValues(s, v, values)
		if err != nil {
			return nil, err
		}
		for _, svc := range s.Services {
			if !svc.RunsIn(v) {
				continue
			}
			spec, err := planService(svc, vals)
			if err != nil {
				return nil, fmt.Errorf("image of %s (%s): %w", svc.Name, v.Key(), err)
			}
			use := Use{Variant: v.Key(), Service: svc.Name}
			key := spec.key()
			if i, ok := byKey[key]; ok {
				specs[i].Uses = append(specs[i].Uses, use)
				continue
			}
			spec.Name = s.Name + "-" + svc.Name
			spec.Uses = []Use{use}
			byKey[key] = len(specs)
			specs = append(specs, spec)
		}
	}
	return specs, nil
}

// key is what makes two specs the same image, on any base.
func (s Spec) key() string {
	paths := make([]string, len(s.Paths))
	for i, p := range s.Paths {
		paths[i] = fmt.Sprint(p.Path, " ", p.Runtime)
	}
	return fmt.Sprintf("%s %q %q %q %q %q", s.Language, s.Runtimes, s.Packages, paths, s.Dir, s.Env)
}

// planValues are the placeholders of variant v; what is only known once
// deployed is left to expand, which stands in for it.
func planValues(s *study.Study, v study.Variant, values map[string]string) (map[string]string, error) {
	vals := maps.Clone(values)
	for k, v := range map[string]string{"addr": "127.0.0.1:1", "host": "127.0.0.1", "port": "1", "replica": "0", "tmp": tmpStandIn} {
		vals[k] = v
	}
	for k, text := range s.Placeholders(v) {
		var err error
		if vals[k], err = expand(text, vals); err != nil {
			return nil, fmt.Errorf("variant %s: %s: %w", v.Key(), k, err)
		}
	}
	return vals, nil
}

// deployed are the placeholders known only once a variant is deployed
// (addresses, a dependency's credentials, what setup requests captured):
// none of them names a file an image must hold.
var deployed = []string{"service.", "dep.", "setup."}

// expand fills in text's placeholders, with a stand-in for those of
// deployed.
func expand(text string, vals map[string]string) (string, error) {
	for _, m := range placeholder.Pattern.FindAllStringSubmatch(text, -1) {
		if _, ok := vals[m[1]]; !ok && slices.ContainsFunc(deployed, func(p string) bool { return strings.HasPrefix(m[1], p) }) {
			vals[m[1]] = "stand-in"
		}
	}
	return placeholder.Expand(text, vals)
}

// needs collects what one service's image must hold.
type needs struct {
	values   map[string]string
	paths    map[string]string // path → why
	runtime  map[string]bool   // paths held only for a runtime run by name
	packages map[string]bool
	env      []string
	// languages are those of the runtimes it needs; byName those it runs
	// by name.
	languages, byName map[string]bool
}

// add makes the image hold p, for why; for a runtime run by name or not:
// a path anything else needs is not the runtime's alone.
func (n *needs) add(p, why string, runtime bool) {
	if _, ok := n.paths[p]; !ok || n.runtime[p] {
		n.runtime[p] = runtime
	}
	n.paths[p] = why
}

func planService(svc *study.Service, vals map[string]string) (Spec, error) {
	n := &needs{values: vals, paths: map[string]string{}, runtime: map[string]bool{}, packages: map[string]bool{},
		languages: map[string]bool{}, byName: map[string]bool{}}
	command, err := expand(svc.Command, vals)
	if err != nil {
		return Spec{}, fmt.Errorf("command %w", err)
	}
	words := strings.Fields(command)
	if len(words) == 0 {
		return Spec{}, errors.New("empty command")
	}
	if err := n.program(strings.Trim(words[0], `"'`), "the command"); err != nil {
		return Spec{}, err
	}
	for _, w := range words[1:] {
		if err := n.named(w, "the command"); err != nil {
			return Spec{}, err
		}
	}
	for _, kv := range svc.Env {
		v, err := expand(kv[1], vals)
		if err != nil {
			return Spec{}, fmt.Errorf("env %s: %w", kv[0], err)
		}
		if err := n.named(v, "env "+kv[0]); err != nil {
			return Spec{}, err
		}
	}
	dir := vals["root"]
	if svc.Dir != "" {
		dir = filepath.Join(vals["root"], svc.Dir)
		n.add(dir, "working directory", false)
	}
	return n.spec(dir), nil
}

// spec lists the paths, an outer directory standing for what is under it
// (and a runtime's no longer its alone if it holds what else is needed).
func (n *needs) spec(dir string) Spec {
	all := slices.Sorted(maps.Keys(n.paths))
	var paths []Path
	for _, p := range all {
		if len(paths) > 0 && within(p, paths[len(paths)-1].Path) {
			paths[len(paths)-1].Runtime = paths[len(paths)-1].Runtime && n.runtime[p]
			continue
		}
		paths = append(paths, Path{Path: p, Why: n.paths[p], Runtime: n.runtime[p]})
	}
	slices.Sort(n.env)
	language := Native
	for _, l := range []string{Java, Node, Python} {
		if n.languages[l] {
			language = l
			break
		}
	}
	return Spec{Language: language, Runtimes: slices.Sorted(maps.Keys(n.byName)),
		Packages: slices.Sorted(maps.Keys(n.packages)), Paths: paths, Dir: dir, Env: slices.Compact(n.env)}
}

// within says whether p is dir or under it.
func within(p, dir string) bool {
	return p == dir || strings.HasPrefix(p, strings.TrimSuffix(dir, "/")+"/")
}

// named adds the file an argument or an env value names, if it names one:
// an absolute path, alone or after KEY= or --flag= (-Dx=/p).
func (n *needs) named(word, why string) error {
	word = strings.Trim(word, `"'`)
	if i := strings.LastIndex(word, "="); i >= 0 {
		word = word[i+1:]
	}
	if !strings.HasPrefix(word, "/") || within(word, tmpStandIn) {
		return nil
	}
	return n.file(filepath.Clean(word), why)
}

// file adds an absolute path the service names: the whole build output it
// is in, a dataset, or the path itself (under the repository, the data
// directory, or elsewhere on this machine).
func (n *needs) file(p, why string) error {
	for _, prefix := range []string{"/dev", "/proc", "/sys"} {
		if within(p, prefix) {
			return nil
		}
	}
	for k, v := range n.values {
		if name, ok := strings.CutPrefix(k, "build."); ok && v != "" && within(p, v) {
			n.add(v, "build "+name, false)
			return nil
		}
	}
	if _, err := os.Stat(p); err != nil {
		return fmt.Errorf("%s names %s: %w", why, p, err)
	}
	for k, v := range n.values {
		if name, ok := strings.CutPrefix(k, "dataset."); ok && v == p {
			n.add(p, "dataset "+name, false)
			return nil
		}
	}
	n.add(p, why, false)
	return nil
}

// program adds what running prog needs: a file of the image (with the
// interpreter its #! line names and the runtimes the script runs), or a
// runtime found by name.
func (n *needs) program(prog, why string) error {
	if !strings.HasPrefix(prog, "/") {
		return n.byRuntime(prog, why)
	}
	if err := n.file(prog, why); err != nil {
		return err
	}
	return n.script(prog)
}

// runtimes the studies run by name, their languages, and how an image on
// Debian's minbase gets each: Node and the JDK from this machine (Debian's
// nodejs is 18, the studies need Node 20.19+; the JDK is the one on PATH),
// Python from Debian.
var runtimes = map[string]struct {
	language string
	add      func(n *needs, why string) error
}{
	"node":    {Node, func(n *needs, why string) error { return n.hostProgram("node", why) }},
	"java":    {Java, (*needs).hostJDK},
	"python3": {Python, func(n *needs, _ string) error { n.packages["python3"] = true; return nil }},
}

func (n *needs) byRuntime(prog, why string) error {
	if slices.Contains(baseProgram, prog) {
		return nil
	}
	if r, ok := runtimes[prog]; ok {
		n.languages[r.language], n.byName[r.language] = true, true
		return r.add(n, prog+" ("+why+")")
	}
	return fmt.Errorf("%s runs %s, which is neither a file of the image nor a runtime it knows (%s, or %s of the base)",
		why, prog, strings.Join(slices.Sorted(maps.Keys(runtimes)), ", "), strings.Join(baseProgram, ", "))
}

// hostProgram adds this machine's program on PATH, with every link on
// the way to its file.
func (n *needs) hostProgram(prog, why string) error {
	found, err := exec.LookPath(prog)
	if err == nil {
		found, err = filepath.Abs(found)
	}
	if err == nil {
		err = n.links(found, why)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", why, err)
	}
	if dir := filepath.Dir(found); !slices.Contains(filepath.SplitList(basePATH), dir) {
		n.env = append(n.env, "PATH="+dir+":"+basePATH)
	}
	return nil
}

// hostJDK adds the JDK whose java is on PATH (the directory above the bin
// the links lead to), with the links.
func (n *needs) hostJDK(why string) error {
	if err := n.hostProgram("java", why); err != nil {
		return err
	}
	found, _ := exec.LookPath("java") // hostProgram found it
	real, err := filepath.EvalSymlinks(found)
	if err != nil {
		return fmt.Errorf("%s: %w", why, err)
	}
	n.add(filepath.Dir(filepath.Dir(real)), why, true)
	return nil
}

// links adds p and each link it leads through (/usr/bin/java,
// /etc/alternatives/java, ...) to a file, each at its path.
func (n *needs) links(p, why string) error {
	for range 40 {
		n.add(p, why, true)
		info, err := os.Lstat(p)
		if err != nil {
			return err
		}
		if info.Mode()&fs.ModeSymlink == 0 {
			return nil
		}
		target, err := os.Readlink(p)
		if err != nil {
			return err
		}
		if !filepath.IsAbs(target) {
			target = filepath.Join(filepath.Dir(p), target)
		}
		p = target
	}
	return fmt.Errorf("%s: too many links", p)
}

var (
	// runsRuntime finds a runtime run by name in a shell script's line.
	runsRuntime = regexp.MustCompile(`(?:^|[\s;&|(])(node|java|python3)(?:\s|$)`)
	// sourced finds the scripts a script names beside it (jdk.sh).
	sourced = regexp.MustCompile(`[\w.-]+\.sh\b`)
)

// jdkGlob finds where a script looks for a JDK, as jdk.sh does
// (/usr/lib/jvm/*25*).
func jdkGlob() *regexp.Regexp {
	return regexp.MustCompile(regexp.QuoteMeta(toolchain.JVMDir) + `/[^\s"';)]+`)
}

// script adds what a script runs: its #! interpreter, the runtimes its
// lines (and those of the scripts beside it that it names) run by name,
// and the first JDK matching a pattern it looks for one by, as jdk.sh
// picks one. A binary is no script and needs nothing more.
func (n *needs) script(file string) error {
	lines, err := scriptLines(file, true)
	if err != nil || lines == nil {
		return err
	}
	why := "the script " + file
	if interp := strings.Fields(strings.TrimPrefix(lines[0], "#!")); len(interp) > 0 {
		prog := interp[0]
		if filepath.Base(prog) == "env" && len(interp) > 1 {
			prog = interp[1]
		}
		if err := n.byRuntime(filepath.Base(prog), why); err != nil {
			return err
		}
	}
	for _, name := range sourced.FindAllString(strings.Join(lines, "\n"), -1) {
		sibling := filepath.Join(filepath.Dir(file), name)
		more, err := scriptLines(sibling, false)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		lines = append(lines, more...)
	}
	for _, line := range lines {
		if strings.HasPrefix(strings.TrimSpace(line), "#") {
			continue
		}
		for _, m := range runsRuntime.FindAllStringSubmatch(line, -1) {
			if err := n.byRuntime(m[1], why); err != nil {
				return err
			}
		}
		for _, pattern := range jdkGlob().FindAllString(line, -1) {
			jdk, err := firstJDK(pattern)
			if err != nil {
				return fmt.Errorf("%s: %w", why, err)
			}
			n.languages[Java] = true
			n.add(jdk, "the JDK "+filepath.Base(file)+" picks ("+pattern+")", false)
		}
	}
	return nil
}

// scriptLines are a file's lines; nil if it must be a script (run, not
// sourced) and does not start with #!.
func scriptLines(file string, run bool) ([]string, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if run && len(lines) == 0 && !strings.HasPrefix(sc.Text(), "#!") {
			return nil, nil
		}
		lines = append(lines, sc.Text())
	}
	if err := sc.Err(); err != nil && len(lines) > 0 {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return lines, nil
}

// firstJDK is the first directory matching pattern with bin/java, the
// one a script looping over the pattern's matches takes.
func firstJDK(pattern string) (string, error) {
	dirs, err := filepath.Glob(pattern)
	if err != nil {
		return "", err
	}
	for _, d := range dirs {
		if info, err := os.Stat(filepath.Join(d, "bin", "java")); err == nil && info.Mode()&0o111 != 0 {
			return d, nil
		}
	}
	return "", fmt.Errorf("no JDK matches %s", pattern)
}
