package deps

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
)

// loopback is the host every instance binds unless Options.Listen says
// otherwise.
const loopback = "127.0.0.1"

// listen fixes the instance's address to addr, HOST:PORT with an IP; empty
// keeps loopback and a free port.
func (e *env) listen(addr string) error {
	if addr == "" {
		return nil
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("listen address %q: %w", addr, err)
	}
	ip := net.ParseIP(host)
	switch {
	case ip == nil:
		return fmt.Errorf("listen address %q: the host must be an IP address", addr)
	case ip.IsUnspecified():
		// The instance's values say where clients connect, which an
		// unspecified address does not.
		return fmt.Errorf("listen address %q: give the address clients dial (a pod's IP), not %s", addr, host)
	}
	n, err := strconv.Atoi(port)
	if err != nil || n < 1 || n > 65535 {
		return fmt.Errorf("listen address %q: port must be 1 to 65535", addr)
	}
	e.host, e.port, e.fixed = ip.String(), n, true
	return nil
}

// password is Options.Password, or a fresh one.
func (e *env) password() string {
	if e.secret != "" {
		return e.secret
	}
	return newPassword()
}

// minPasswordLen is what newPassword gives: 26 characters of base32, 130
// bits.
const minPasswordLen = 16

// CheckPassword says whether p may be an instance's password (Options.Password):
// the servers' set-up writes it unquoted into URLs, DSNs, SQL strings and
// config files, so only letters and digits will do, and it must be at least
// as hard to guess as a fresh one, which every local user could otherwise
// try.
func CheckPassword(p string) error {
	if len(p) < minPasswordLen {
		return fmt.Errorf("password has %d characters, at least %d needed", len(p), minPasswordLen)
	}
	for _, c := range p {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9') {
			return errors.New("password has a character other than a letter or digit")
		}
	}
	return nil
}

// openHBA lets PostgreSQL's clients log in from any address, with the
// password still, because initdb's pg_hba.conf admits loopback only and an
// instance listening on a pod's IP is dialled from other pods.
func openHBA(data string) error {
	f, err := os.OpenFile(filepath.Join(data, "pg_hba.conf"), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return err
	}
	_, err = f.WriteString("host all all all scram-sha-256\n")
	return errors.Join(err, f.Close())
}
