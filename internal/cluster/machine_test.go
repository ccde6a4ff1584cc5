package cluster

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// useMachineFile points the machine's claim at a file of the test's.
func useMachineFile(t *testing.T) string {
	t.Helper()
	old := machineFile
	machineFile = filepath.Join(t.TempDir(), "machine")
	t.Cleanup(func() { machineFile = old })
	return machineFile
}

func holder(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(machineFile)
	if errors.Is(err, os.ErrNotExist) {
		return "(none)"
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

func TestMachineClaim(t *testing.T) {
	ready := stateIn(t, state{Ready: true})
	starting := stateIn(t, state{Owner: initProcess(t)})
	gone := t.TempDir() // no state: its cluster was taken down
	for _, tc := range []struct {
		name   string
		holder string // "" for no claim
		want   error
	}{
		{"free machine", "", nil},
		{"own claim", "/mine", nil},
		{"ready cluster's", ready, ErrBusy},
		{"starting cluster's", starting, ErrBusy},
		{"gone cluster's", gone, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			useMachineFile(t)
			if tc.holder != "" {
				if err := os.WriteFile(machineFile, []byte(tc.holder+"\n"), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			err := claimMachine(context.Background(), "/mine", 0)
			if !errors.Is(err, tc.want) {
				t.Fatalf("claim = %v, want %v", err, tc.want)
			}
			want := "/mine"
			if tc.want != nil {
				want = tc.holder
			}
			if got := holder(t); got != want {
				t.Errorf("machine held by %s, want %s", got, want)
			}
		})
	}
}

func TestMachineClaimWaits(t *testing.T) {
	useMachineFile(t)
	busy := t.TempDir()
	if err := writeState(layout{busy}, state{Ready: true}); err != nil {
		t.Fatal(err)
	}
	if err := claimMachine(context.Background(), busy, 0); err != nil {
		t.Fatal(err)
	}
	go func() {
		time.Sleep(300 * time.Millisecond)
		os.Remove(layout{busy}.stateFile()) // its Down has run
	}()
	if err := claimMachine(context.Background(), "/mine", time.Minute); err != nil {
		t.Fatalf("claim = %v, want the machine once the other cluster went", err)
	}
	if got := holder(t); got != "/mine" {
		t.Errorf("machine held by %s", got)
	}
}

func TestMachineRelease(t *testing.T) {
	for _, tc := range []struct {
		name, holder, releaser string
		kept                   bool
	}{
		{"by its holder", "/mine", "/mine", false},
		{"by another", "/other", "/mine", true},
		{"an empty claim", "", "/mine", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			useMachineFile(t)
			if err := os.WriteFile(machineFile, []byte(tc.holder), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := releaseMachine(tc.releaser); err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(machineFile); (err == nil) != tc.kept {
				t.Errorf("claim file kept: %v, want %v", err == nil, tc.kept)
			}
		})
	}
	t.Run("no claim", func(t *testing.T) {
		useMachineFile(t)
		if err := releaseMachine("/mine"); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(machineFile); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("releasing made a claim file: %v", err)
		}
	})
}
