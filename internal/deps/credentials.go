package deps

// The user, password and database msbench creates in the servers that
// have them. Fixed and public: every server listens on loopback only.
const (
	dbUser     = "msbench"
	dbPassword = "msbench"
	dbName     = "msbench"
)

func credentials() map[string]string {
	return map[string]string{"user": dbUser, "password": dbPassword, "database": dbName}
}
