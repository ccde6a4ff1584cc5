package runner

import (
	"strings"
	"testing"

	"github.com/msbench/msbench/internal/study"
)

// What a cluster cannot do is refused before anything starts, naming the
// step, event or section; the profiles meant for a cluster pass.
func TestRefusedOnCluster(t *testing.T) {
	for _, tc := range []struct {
		study, profile string
		freeze         bool
		want           []string // "" for none
	}{
		{"ipc", "", false, []string{"step fault-pause-service", "event pause reviews", "cannot pause a pod", "event resume reviews"}},
		{"ipc", "cluster", false, nil},
		{"faas-gateway", "quick", false, nil},
		{"faas-gateway", "quick", true, []string{"idle: freeze", "--idle run"}},
	} {
		t.Run(tc.study+"/"+tc.profile, func(t *testing.T) {
			s, err := study.Load("../../studies/"+tc.study+"/study.yaml", tc.profile)
			if err != nil {
				t.Fatal(err)
			}
			s.Interleave.Freeze = tc.freeze
			err = refuseOnCluster(s)
			if len(tc.want) == 0 {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatal("not refused")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("the refusal does not say %q: %v", w, err)
				}
			}
		})
	}
}
