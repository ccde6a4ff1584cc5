package study

import (
	"path/filepath"
	"strings"
	"testing"
)

func faasGateway(t *testing.T) *Study {
	t.Helper()
	s, err := Load(filepath.Join("..", "..", "studies", "faas-gateway", "study.yaml"), "")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func keysOf(vs []Variant) string { return strings.Join(Keys(vs), " ") }

func TestKeepVariants(t *testing.T) {
	for _, c := range []struct {
		keys []string
		want string
	}{
		{[]string{"nethttp-pooled-0ms"}, "nethttp-pooled-0ms"},
		// The smallest product that holds both, in the axes' own order.
		{[]string{"gin-dial-0ms", "nethttp-pooled-0ms"}, "nethttp-pooled-0ms nethttp-dial-0ms gin-pooled-0ms gin-dial-0ms"},
	} {
		s := faasGateway(t)
		if err := s.KeepVariants(c.keys); err != nil {
			t.Fatal(err)
		}
		if got := keysOf(s.Matrix()); got != c.want {
			t.Errorf("keep %v: %s, want %s", c.keys, got, c.want)
		}
	}
	err := faasGateway(t).KeepVariants([]string{"nethttp-pooled"})
	if err == nil || !strings.Contains(err.Error(), `no variant "nethttp-pooled" (variants: nethttp-pooled-0ms, `) {
		t.Errorf("unknown key: %v, want the known ones listed", err)
	}
}

func TestKeepSteps(t *testing.T) {
	s := faasGateway(t)
	if err := s.KeepSteps([]string{"ima*", "empty"}); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, st := range s.Load.Steps {
		names = append(names, st.Name)
	}
	if got := strings.Join(names, " "); got != "empty image" {
		t.Errorf("kept %s, want empty image in the study's order", got)
	}
	for _, globs := range [][]string{{"nosuch"}, {"["}} {
		if err := faasGateway(t).KeepSteps(globs); err == nil {
			t.Errorf("%v: no error", globs)
		}
	}
}

func TestSideBySide(t *testing.T) {
	s := faasGateway(t)
	if err := s.KeepVariants([]string{"nethttp-pooled-0ms", "gin-pooled-0ms"}); err != nil {
		t.Fatal(err)
	}
	ab, err := s.SideBySide("build", []string{"base", "new"})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := keysOf(ab.Runs()), "base-nethttp-pooled-0ms base-gin-pooled-0ms new-nethttp-pooled-0ms new-gin-pooled-0ms"; got != want {
		t.Errorf("runs %s, want %s (and no A/A twin)", got, want)
	}
	if ab.BaselineKey() != "base-nethttp-pooled-0ms" {
		t.Errorf("baseline %s", ab.BaselineKey())
	}
	if len(s.Variants) != 3 || s.AA == "" {
		t.Error("the study given was changed")
	}
	if _, err := ab.SideBySide("framework", []string{"a", "b"}); err == nil {
		t.Error("an axis name the study uses was taken")
	}
	// A profile's only: keeps its variants on each side.
	s = faasGateway(t)
	s.Only = []string{"gin-dial-0ms", "echo-pooled-0ms"}
	if ab, err = s.SideBySide("build", []string{"base", "new"}); err != nil {
		t.Fatal(err)
	}
	if got, want := keysOf(ab.Matrix()), "base-gin-dial-0ms base-echo-pooled-0ms new-gin-dial-0ms new-echo-pooled-0ms"; got != want {
		t.Errorf("matrix %s, want %s", got, want)
	}
}
