package deps

import (
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
)

// userDir creates the subdirectory name of the private dir for a server
// that runs as the system user owner and must own its files (PostgreSQL
// refuses to run as root; MariaDB drops to its own user; Redis is made to).
func (e *env) userDir(name, owner string) (string, error) {
	if err := searchable(e.dir); err != nil {
		return "", fmt.Errorf("%s runs as user %s, which %w; put the private dir under a directory others may enter, e.g. %s",
			e.kind, owner, err, os.TempDir())
	}
	dir := e.path(name)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	if err := chown(dir, owner); err != nil {
		return "", err
	}
	return dir, nil
}

// chown gives path to the system user owner and its primary group.
func chown(path, owner string) error {
	u, err := user.Lookup(owner)
	if err != nil {
		return fmt.Errorf("system user %s: %w", owner, err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return os.Chown(path, uid, gid)
}

// searchable checks that a user other than the owner can reach dir, i.e.
// every directory on its path has the search bit for others. (Group and
// ownership could also grant it, but the dirs here belong to root.)
func searchable(dir string) error {
	for d := dir; ; d = filepath.Dir(d) {
		st, err := os.Stat(d)
		if err != nil {
			return fmt.Errorf("cannot check %s: %w", d, err)
		}
		if st.Mode().Perm()&0o001 == 0 {
			return fmt.Errorf("cannot enter %s (mode %04o)", d, st.Mode().Perm())
		}
		if d == filepath.Dir(d) {
			return nil
		}
	}
}
