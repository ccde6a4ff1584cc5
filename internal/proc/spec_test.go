package proc_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/msbench/msbench/internal/proc"
)

func TestStartSpec(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name string
		spec proc.Spec
		skip func() string
		want string // log content
	}{
		{
			name: "extra env",
			spec: proc.Spec{Path: "sh", Args: []string{"-c", "echo $MSBENCH_X"}, Env: []string{"MSBENCH_X=from-spec"}},
			want: "from-spec\n",
		},
		{
			name: "later env wins",
			spec: proc.Spec{Path: "sh", Args: []string{"-c", "echo $HOME"}, Env: []string{"HOME=/elsewhere"}},
			want: "/elsewhere\n",
		},
		{
			name: "working directory",
			spec: proc.Spec{Path: "pwd", Dir: dir},
			want: dir + "\n",
		},
		{
			name: "stderr goes to the log too",
			spec: proc.Spec{Path: "sh", Args: []string{"-c", "echo out; echo err >&2"}},
			want: "out\nerr\n",
		},
		{
			name: "run as user",
			spec: proc.Spec{Path: "sh", Args: []string{"-c", "id -un; echo $HOME"}, User: "nobody"},
			skip: func() string {
				if os.Geteuid() != 0 {
					return "needs root to switch user"
				}
				if _, err := user.Lookup("nobody"); err != nil {
					return "no user nobody"
				}
				return ""
			},
			want: "nobody\n",
		},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.skip != nil {
				if why := tt.skip(); why != "" {
					t.Skip(why)
				}
			}
			tt.spec.Name = tt.name
			tt.spec.LogPath = filepath.Join(dir, "logs", string(rune('a'+i))+".log")
			p, err := proc.Start(context.Background(), tt.spec)
			if err != nil {
				t.Fatal(err)
			}
			<-p.Done()
			if err := p.ExitErr(); err != nil {
				t.Fatal(err)
			}
			b, _ := os.ReadFile(tt.spec.LogPath)
			if !strings.HasPrefix(string(b), tt.want) {
				t.Errorf("log = %q, want prefix %q", b, tt.want)
			}
		})
	}
}

func TestStartLogAppends(t *testing.T) {
	log := filepath.Join(t.TempDir(), "x.log")
	for range 2 {
		p, err := proc.Start(context.Background(), proc.Spec{Name: "echo", Path: "echo", Args: []string{"hi"}, LogPath: log})
		if err != nil {
			t.Fatal(err)
		}
		<-p.Done()
	}
	if b, _ := os.ReadFile(log); string(b) != "hi\nhi\n" {
		t.Errorf("log = %q, want two appended lines", b)
	}
}

func TestStartErrors(t *testing.T) {
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	tests := []struct {
		name    string
		ctx     context.Context
		spec    proc.Spec
		wantErr error
		want    string
	}{
		{"missing binary", context.Background(), proc.Spec{Name: "ghost", Path: "msbench-no-such-binary"}, exec.ErrNotFound, "start ghost:"},
		{"unknown user", context.Background(), proc.Spec{Name: "u", Path: "true", User: "msbench-no-such-user"}, nil, `start u: user "msbench-no-such-user"`},
		{"no name", context.Background(), proc.Spec{Path: "true"}, nil, "spec has no name"},
		{"cancelled", cancelled, proc.Spec{Name: "c", Path: "true"}, context.Canceled, "start c:"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := proc.Start(tt.ctx, tt.spec)
			if err == nil {
				_ = p.Stop(context.Background(), time.Second)
				t.Fatal("Start succeeded")
			}
			if tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
				t.Errorf("err = %v, want %v", err, tt.wantErr)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %q, want it to contain %q", err, tt.want)
			}
		})
	}
}
