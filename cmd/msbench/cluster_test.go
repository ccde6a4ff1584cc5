package main

import (
	"bytes"
	"strings"
	"testing"
)

func TestClusterCommand(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name    string
		args    []string
		wantOut string
		wantErr string
	}{
		{"down with no cluster says so", []string{"down", "--state-dir", dir}, "no cluster in " + dir, ""},
		{"up takes no arguments", []string{"up", "--state-dir", dir, "extra"}, "", "unknown command"},
		{"down takes no arguments", []string{"down", "--state-dir", dir, "extra"}, "", "unknown command"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd := newClusterCmd()
			var out bytes.Buffer
			cmd.SetOut(&out)
			cmd.SetErr(&out)
			cmd.SetArgs(tc.args)
			err := cmd.Execute()
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want one saying %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(out.String(), tc.wantOut) {
				t.Errorf("output %q, want %q", out.String(), tc.wantOut)
			}
		})
	}
}
