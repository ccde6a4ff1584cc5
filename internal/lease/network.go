package lease

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// NetNSDir is where iproute2 keeps named network namespaces.
const NetNSDir = "/run/netns"

// RemoveNetNS removes a named network namespace as `ip netns delete`
// does: unmounting its file ends the name, and the namespace itself ends
// with its last process. One already gone is not an error.
func RemoveNetNS(name string) error {
	path := filepath.Join(NetNSDir, name)
	if err := unix.Unmount(path, unix.MNT_DETACH); err != nil && !errors.Is(err, unix.EINVAL) && !errors.Is(err, unix.ENOENT) {
		return fmt.Errorf("unmount network namespace %s: %w", name, err)
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("remove network namespace %s: %w", name, err)
	}
	return nil
}

// RemoveNetDev deletes a network interface of msbench's namespace; one
// already gone is not an error.
func RemoveNetDev(name string) error {
	if _, err := os.Stat(filepath.Join("/sys/class/net", name)); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	out, err := exec.Command("ip", "link", "delete", name).CombinedOutput()
	if err != nil && !strings.Contains(string(out), "Cannot find device") {
		return fmt.Errorf("delete interface %s: %v: %s", name, err, strings.TrimSpace(string(out)))
	}
	return nil
}
