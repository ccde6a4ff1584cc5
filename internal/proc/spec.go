package proc

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"syscall"

	"github.com/msbench/msbench/internal/placement"
)

// Spec describes one child process.
type Spec struct {
	Name string   // used in errors and logs
	Path string   // executable; looked up in PATH when it has no slash
	Args []string // arguments after the program name
	Env  []string // extra KEY=VALUE added to os.Environ(); later entries win
	Dir  string   // working directory; empty means the current one
	// LogPath receives stdout and stderr, appended. Empty discards output.
	LogPath string
	// User optionally runs the process as this system user (e.g. "postgres");
	// uid, gid and supplementary groups come from os/user. Needs root.
	User string
	// CPUs places the process (and every process and thread it makes, which
	// inherit it) on these cores: it is forked from a thread set to them,
	// so it never runs elsewhere. Nil means every core msbench may use
	// (placement.Available), whatever cores msbench itself runs on.
	CPUs placement.CPUs
	// NetNS starts the process in the network namespace whose file this is
	// (e.g. /run/netns/NAME): an emulated host. Empty: msbench's own.
	NetNS string
}

func (s Spec) validate() error {
	if s.Name == "" {
		return errors.New("spec has no name")
	}
	if s.Path == "" {
		return errors.New("spec has no path")
	}
	return nil
}

// command builds the exec.Cmd for s. The returned file is the log file that
// the caller must close once the child has been started (the child keeps its
// own copy of the descriptor).
func (s Spec) command() (*exec.Cmd, *os.File, error) {
	if err := s.validate(); err != nil {
		return nil, nil, err
	}
	cmd := exec.Command(s.Path, s.Args...)
	cmd.Dir = s.Dir
	cmd.Env = os.Environ()
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Setpgid:   true,
		Pdeathsig: syscall.SIGKILL,
	}
	if s.User != "" {
		cred, env, err := lookupUser(s.User)
		if err != nil {
			return nil, nil, err
		}
		cmd.SysProcAttr.Credential = cred
		cmd.Env = append(cmd.Env, env...)
	}
	cmd.Env = append(cmd.Env, s.Env...)

	var logFile *os.File
	if s.LogPath != "" {
		if err := os.MkdirAll(filepath.Dir(s.LogPath), 0o755); err != nil {
			return nil, nil, fmt.Errorf("log dir: %w", err)
		}
		f, err := os.OpenFile(s.LogPath, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
		if err != nil {
			return nil, nil, fmt.Errorf("open log: %w", err)
		}
		// An *os.File is handed to the child as-is, so no copying goroutine
		// exists that could block Wait after a grandchild inherits the pipe.
		cmd.Stdout, cmd.Stderr = f, f
		logFile = f
	}
	return cmd, logFile, nil
}

// lookupUser resolves name to credentials plus the HOME/USER/LOGNAME a
// login would set, because daemons such as postgres read them.
func lookupUser(name string) (*syscall.Credential, []string, error) {
	u, err := user.Lookup(name)
	if err != nil {
		return nil, nil, fmt.Errorf("user %q: %w", name, err)
	}
	uid, err := strconv.ParseUint(u.Uid, 10, 32)
	if err != nil {
		return nil, nil, fmt.Errorf("user %q uid %q: %w", name, u.Uid, err)
	}
	gid, err := strconv.ParseUint(u.Gid, 10, 32)
	if err != nil {
		return nil, nil, fmt.Errorf("user %q gid %q: %w", name, u.Gid, err)
	}
	var groups []uint32
	if ids, err := u.GroupIds(); err == nil {
		for _, id := range ids {
			if g, err := strconv.ParseUint(id, 10, 32); err == nil {
				groups = append(groups, uint32(g))
			}
		}
	}
	cred := &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), Groups: groups}
	env := []string{"HOME=" + u.HomeDir, "USER=" + u.Username, "LOGNAME=" + u.Username}
	return cred, env, nil
}
