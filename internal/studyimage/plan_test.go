package studyimage

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/msbench/msbench/internal/study"
	"github.com/msbench/msbench/internal/toolchain"
)

// planOne plans a one-service study whose service runs command, in a
// temporary root holding files (name → content, mode 0755).
func planOne(t *testing.T, command string, files map[string]string) (string, []Spec, error) {
	t.Helper()
	root := t.TempDir()
	for name, content := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	s, err := study.Parse("p.yaml", []byte(`study: p
builds:
  b: {dir: ., command: "true"}
services:
  svc: {command: "`+command+`", env: {DATA: "{tmp}/x", PEER: "{service.svc.addr}"}, ready: {tcp: "{addr}"}}
load: {service: svc, steps: [{name: s, requests: 1, targets: [{path: /}]}]}
`), "")
	if err != nil {
		t.Fatal(err)
	}
	specs, err := Plan(s, nil, map[string]string{"root": root, "build.b": filepath.Join(root, "out")})
	return root, specs, err
}

func paths(s Spec) []string {
	var out []string
	for _, p := range s.Paths {
		out = append(out, p.Path)
	}
	return out
}

// What a command and the scripts it runs need, found in the files, and
// what cannot be had refused naming the service.
func TestPlanNeeds(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		node = ""
	}
	jvm := fakeJVM(t)
	for _, tc := range []struct {
		name     string
		command  string
		files    map[string]string
		paths    []string // relative to root, or absolute; what the image holds
		packages []string
		err      string // in the error, beside the service's name
	}{
		{name: "a build's binary: the whole output", command: "{build.b}/server --flag", files: map[string]string{"out/server": "\x7fELF", "out/lib.so": ""}, paths: []string{"out"}},
		{name: "an argument under the root", command: "{build.b}/server --config={root}/conf/c.yaml", files: map[string]string{"out/server": "", "conf/c.yaml": ""}, paths: []string{"conf/c.yaml", "out"}},
		{name: "a missing file", command: "{root}/nothing/here", err: "nothing/here"},
		{name: "an unknown program", command: "ruby {root}/x.rb", files: map[string]string{"x.rb": ""}, err: "ruby"},
		{name: "python from Debian", command: "python3 {root}/app.py", files: map[string]string{"app.py": ""}, paths: []string{"app.py"}, packages: []string{"python3"}},
		{name: "a script's interpreter", command: "{build.b}/run.sh", files: map[string]string{"out/run.sh": "#!/usr/bin/env python3\n"}, paths: []string{"out"}, packages: []string{"python3"}},
		{name: "the JDK a sourced script picks", command: "{build.b}/run.sh hello",
			files: map[string]string{"out/run.sh": "#!/usr/bin/env bash\n. \"$dir/jdk.sh\"\nexec \"$JAVA_HOME/bin/java\"\n", "out/jdk.sh": "for d in " + jvm + "/*25*; do :; done\n"},
			paths: []string{filepath.Join(jvm, "jdk-25"), "out"}},
		{name: "a JDK no directory has", command: "{build.b}/run.sh", files: map[string]string{"out/run.sh": "#!/bin/sh\nls " + jvm + "/*17*\n"}, err: "no JDK matches"},
		{name: "a runtime in a comment is not run", command: "{build.b}/run.sh", files: map[string]string{"out/run.sh": "#!/bin/sh\n# then node runs\n"}, paths: []string{"out"}},
		{name: "a script's unknown interpreter", command: "{build.b}/run.sh", files: map[string]string{"out/run.sh": "#!/usr/bin/perl\n"}, err: "perl"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root, specs, err := planOne(t, tc.command, tc.files)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), "svc") || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one naming svc and %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(specs) != 1 {
				t.Fatalf("%d images, want 1", len(specs))
			}
			var want []string
			for _, p := range tc.paths {
				if !filepath.IsAbs(p) {
					p = filepath.Join(root, p)
				}
				want = append(want, p)
			}
			slices.Sort(want)
			if got := paths(specs[0]); !slices.Equal(got, want) {
				t.Errorf("paths %q, want %q", got, want)
			}
			if !slices.Equal(specs[0].Packages, tc.packages) {
				t.Errorf("packages %q, want %q", specs[0].Packages, tc.packages)
			}
			if specs[0].Dir != root || specs[0].Name != "p-svc" {
				t.Errorf("dir %s name %s, want %s p-svc", specs[0].Dir, specs[0].Name, root)
			}
		})
	}
	t.Run("node from this machine", func(t *testing.T) {
		if node == "" {
			t.Skip("no node on PATH")
		}
		root, specs, err := planOne(t, "{build.b}/run.sh", map[string]string{"out/run.sh": "#!/bin/sh\nNODE_ENV=production exec node \"$dir/main.js\"\n"})
		if err != nil {
			t.Fatal(err)
		}
		real, _ := filepath.EvalSymlinks(node)
		got := paths(specs[0])
		for _, p := range []string{node, real, filepath.Join(root, "out")} {
			if !slices.Contains(got, p) {
				t.Errorf("paths %q lack %s", got, p)
			}
		}
	})
	t.Run("a runtime outside the base's PATH, through a link", func(t *testing.T) {
		bin, opt := t.TempDir(), t.TempDir()
		real := filepath.Join(opt, "node-20")
		if err := os.WriteFile(real, []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(real, filepath.Join(bin, "node")); err != nil {
			t.Fatal(err)
		}
		t.Setenv("PATH", bin)
		_, specs, err := planOne(t, "node {root}/main.js", map[string]string{"main.js": ""})
		if err != nil {
			t.Fatal(err)
		}
		got := paths(specs[0])
		for _, p := range []string{filepath.Join(bin, "node"), real} {
			if !slices.Contains(got, p) {
				t.Errorf("paths %q lack %s", got, p)
			}
		}
		if want := []string{"PATH=" + bin + ":" + basePATH}; !slices.Equal(specs[0].Env, want) {
			t.Errorf("env %q, want %q", specs[0].Env, want)
		}
	})
}

// An image's language is the runtime its service needs, and the paths it
// holds only as the host's installation of a runtime run by name are
// marked, as a base for the language replaces them; the rest are not.
func TestPlanLanguage(t *testing.T) {
	bin, opt := fakeRuntimes(t)
	jdk := filepath.Join(opt, "jdk")
	jvm := fakeJVM(t)

	for _, tc := range []struct {
		name     string
		command  string
		files    map[string]string
		language string
		runtimes []string
		runtime  []string // the paths marked Runtime
	}{
		{name: "a compiled binary", command: "{build.b}/server", files: map[string]string{"out/server": "\x7fELF"}, language: Native},
		{name: "a shell script", command: "{build.b}/run.sh", files: map[string]string{"out/run.sh": "#!/bin/sh\nexec true\n"}, language: Native},
		{name: "node by name", command: "node {root}/main.js", files: map[string]string{"main.js": ""}, language: Node, runtimes: []string{Node},
			runtime: []string{filepath.Join(bin, "node"), filepath.Join(opt, "node-20/node")}},
		{name: "node by a script", command: "{build.b}/run.sh", files: map[string]string{"out/run.sh": "#!/bin/sh\nexec node main.js\n"}, language: Node, runtimes: []string{Node},
			runtime: []string{filepath.Join(bin, "node"), filepath.Join(opt, "node-20/node")}},
		{name: "java by name", command: "java -jar {root}/app.jar", files: map[string]string{"app.jar": ""}, language: Java, runtimes: []string{Java},
			runtime: []string{filepath.Join(bin, "java"), jdk}},
		{name: "java by name, its JDK's file named", command: "java -cp " + jdk + "/lib/tool.jar Main", language: Java, runtimes: []string{Java},
			runtime: []string{filepath.Join(bin, "java")}},
		{name: "the JDK a script picks, by a pattern", command: "{build.b}/run.sh", language: Java,
			files: map[string]string{"out/run.sh": "#!/usr/bin/env bash\nfor d in " + jvm + "/*25*; do :; done\nexec \"$d/bin/java\"\n"}},
		{name: "python3", command: "python3 {root}/app.py", files: map[string]string{"app.py": ""}, language: Python, runtimes: []string{Python}},
		{name: "java first", command: "{build.b}/run.sh", files: map[string]string{"out/run.sh": "#!/usr/bin/env python3\nnode x; java y\n"}, language: Java,
			runtimes: []string{Java, Node, Python}, runtime: []string{filepath.Join(bin, "java"), filepath.Join(bin, "node"), jdk, filepath.Join(opt, "node-20/node")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, specs, err := planOne(t, tc.command, tc.files)
			if err != nil {
				t.Fatal(err)
			}
			s := specs[0]
			if s.Language != tc.language || !slices.Equal(s.Runtimes, tc.runtimes) {
				t.Errorf("language %s, runtimes %q; want %s, %q", s.Language, s.Runtimes, tc.language, tc.runtimes)
			}
			var runtime []string
			for _, p := range s.Paths {
				if p.Runtime {
					runtime = append(runtime, p.Path)
				}
			}
			slices.Sort(tc.runtime)
			if !slices.Equal(runtime, tc.runtime) {
				t.Errorf("runtime paths %q, want %q (all: %+v)", runtime, tc.runtime, s.Paths)
			}
		})
	}
}

// fakeRuntimes makes PATH a directory, bin, holding only node and java,
// links into installations of their own under opt (node-20/node, jdk).
func fakeRuntimes(t *testing.T) (bin, opt string) {
	t.Helper()
	bin, opt = t.TempDir(), t.TempDir()
	for _, f := range []string{"node-20/node", "jdk/bin/java", "jdk/lib/tool.jar"} {
		p := filepath.Join(opt, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for prog, real := range map[string]string{"node": "node-20/node", "java": "jdk/bin/java"} {
		if err := os.Symlink(filepath.Join(opt, real), filepath.Join(bin, prog)); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("PATH", bin)
	return bin, opt
}

// fakeJVM makes toolchain.JVMDir, for the test's length, a directory
// holding one JDK, jdk-25 (its bin/java, empty).
func fakeJVM(t *testing.T) string {
	t.Helper()
	jvm := t.TempDir()
	if err := os.MkdirAll(filepath.Join(jvm, "jdk-25", "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(jvm, "jdk-25", "bin", "java"), nil, 0o755); err != nil {
		t.Fatal(err)
	}
	old := toolchain.JVMDir
	t.Cleanup(func() { toolchain.JVMDir = old })
	toolchain.JVMDir = jvm
	return jvm
}
