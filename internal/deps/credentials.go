package deps

import (
	"crypto/rand"
	"os"
)

// The user and database msbench creates in the servers that have them.
const (
	dbUser = "msbench"
	dbName = "msbench"
)

// newPassword returns a fresh secret for one account of one instance. Even
// a loopback-only server is reachable by every local user and by every
// service under test, so no account may have a known or empty password.
// The base32 alphabet of rand.Text needs no quoting in URLs, DSNs, SQL
// strings or config files.
func newPassword() string { return rand.Text() }

// credentialKeys are what credentials gives.
var credentialKeys = []string{"user", "password", "database"}

func credentials(password string) map[string]string {
	return map[string]string{"user": dbUser, "password": password, "database": dbName}
}

// writeSecret creates path readable by owner only: the system user a server
// or its setup program runs as, or msbench's own user when owner is empty.
func writeSecret(path, content, owner string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	_, err = f.WriteString(content)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil && owner != "" {
		err = chown(path, owner)
	}
	if err != nil {
		os.Remove(path)
	}
	return err
}
