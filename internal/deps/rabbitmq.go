package deps

import (
	"context"
	"fmt"
	"net"
	"os"
	"strconv"

	amqp "github.com/rabbitmq/amqp091-go"

	"github.com/msbench/msbench/internal/proc"
)

// rabbitmq runs the broker from the package's own script, not the wrapper
// on PATH, which switches user and writes to the system's directories. The
// script is made to exec the Erlang VM, so that the process proc starts
// becomes the VM itself and dies with msbench (the parent-death signal
// survives an exec, not a fork). The Erlang port mapper (epmd) it needs is
// started first as a child of its own, on a private port, so that the VM
// does not daemonize one that would outlive the run.
type rabbitmq struct {
	server, epmd       string
	distPort, epmdPort int
	password           string
}

// rabbitmqConf keeps msbench's user to loopback clients, as RabbitMQ does
// for guest by default, unless the instance listens elsewhere.
func rabbitmqConf(e *env) string {
	if e.host != loopback {
		return "loopback_users = none\n"
	}
	return "loopback_users." + dbUser + " = true\n"
}

func (s *rabbitmq) find(_ context.Context, e *env) error {
	var err error
	if s.server, err = program(e, "rabbitmq-server", debian("rabbitmq-server"), "/usr/lib/rabbitmq/lib/rabbitmq_server-*/sbin"); err != nil {
		return err
	}
	s.epmd, err = program(e, "epmd", debian("erlang-base"), "/usr/lib/erlang/bin")
	return err
}

func (s *rabbitmq) init(_ context.Context, e *env) error {
	var err error
	if s.distPort, err = e.ports.Next(); err != nil {
		return err
	}
	if s.epmdPort, err = e.ports.Next(); err != nil {
		return err
	}
	for _, d := range []string{"home", "mnesia", "log", "conf.d"} {
		if err := os.Mkdir(e.path(d), 0o755); err != nil {
			return err
		}
	}
	// No plugins (the management UI would cost start-up time and memory),
	// and an empty environment file instead of /etc/rabbitmq's.
	files := map[string]string{"enabled_plugins": "[].\n", "rabbitmq-env.conf": ""}
	for name, content := range files {
		if err := os.WriteFile(e.path(name), []byte(content), 0o644); err != nil {
			return err
		}
	}
	// The broker makes its default user, instead of guest/guest, on the
	// first boot only, when its database is empty; seeded then drops the
	// password from the file.
	s.password = e.password()
	return writeSecret(s.conf(e), rabbitmqConf(e)+"default_user = "+dbUser+"\ndefault_pass = "+s.password+"\n", "")
}

func (s *rabbitmq) conf(e *env) string { return e.path("rabbitmq.conf") }

func (s *rabbitmq) seeded(e *env) error {
	if err := os.Remove(s.conf(e)); err != nil {
		return err
	}
	return writeSecret(s.conf(e), rabbitmqConf(e), "")
}

func (s *rabbitmq) url(e *env) string {
	return "amqp://" + dbUser + ":" + s.password + "@" + e.addr() + "/"
}

func (*rabbitmq) keys() []string { return []string{"user", "password"} }

func (s *rabbitmq) values(*env) map[string]string {
	return map[string]string{"user": dbUser, "password": s.password}
}

func (s *rabbitmq) launches(e *env) []launch {
	epmdAddr := net.JoinHostPort("127.0.0.1", strconv.Itoa(s.epmdPort))
	epmd := e.spec("epmd", s.epmd, "-port", strconv.Itoa(s.epmdPort), "-address", "127.0.0.1")

	server := e.spec("rabbitmq-server", s.server)
	server.Env = []string{
		// The script then execs the VM instead of keeping a shell that
		// turns SIGTERM into a clean stop: the VM does that itself (OTP
		// 20 and later).
		"RUNNING_UNDER_SYSTEMD=true",
		"HOME=" + e.path("home"), // the Erlang cookie goes there
		fmt.Sprintf("RABBITMQ_NODENAME=msbench-%d@localhost", e.port),
		"RABBITMQ_NODE_IP_ADDRESS=" + e.host,
		"RABBITMQ_NODE_PORT=" + strconv.Itoa(e.port),
		"RABBITMQ_DIST_PORT=" + strconv.Itoa(s.distPort),
		"ERL_EPMD_PORT=" + strconv.Itoa(s.epmdPort),
		"ERL_EPMD_ADDRESS=127.0.0.1",
		"RABBITMQ_MNESIA_BASE=" + e.path("mnesia"),
		"RABBITMQ_LOG_BASE=" + e.path("log"),
		"RABBITMQ_LOGS=-", // to the process's output, which proc logs
		"RABBITMQ_ENABLED_PLUGINS_FILE=" + e.path("enabled_plugins"),
		"RABBITMQ_CONF_ENV_FILE=" + e.path("rabbitmq-env.conf"),
		"RABBITMQ_CONFIG_FILE=" + e.path("rabbitmq"), // .conf, written by init
		"RABBITMQ_ADVANCED_CONFIG_FILE=" + e.path("advanced.config"),
		// Empty: not the system's /etc/rabbitmq/conf.d, which a standard
		// image fills (rabbitmq:3.13's opens guest to remote clients and
		// sets the management agent's collection), and where a key the
		// broker does not know stops its boot.
		"RABBITMQ_CONFIG_FILES=" + e.path("conf.d"),
		// Added to, not replacing, the script's tuned VM arguments.
		"RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS=-kernel inet_dist_use_interface {127,0,0,1} -start_epmd false",
	}
	return []launch{
		{spec: epmd, ready: proc.TCPCheck{Addr: epmdAddr}},
		{spec: server, ready: proc.FuncCheck(func(ctx context.Context) error { return s.openChannel(ctx, e) })},
	}
}

func (s *rabbitmq) openChannel(ctx context.Context, e *env) error {
	conn, _, err := dialChannel(ctx, s.url(e))
	if err != nil {
		return err
	}
	return conn.Close()
}

// dialChannel connects to url and opens a channel.
func dialChannel(ctx context.Context, url string) (*amqp.Connection, *amqp.Channel, error) {
	conn, err := amqp.DialConfig(url, amqp.Config{Dial: dialContext(ctx)})
	if err != nil {
		return nil, nil, err
	}
	ch, err := conn.Channel()
	if err != nil {
		conn.Close()
		return nil, nil, err
	}
	return conn, ch, nil
}

// dialContext bounds the connection and the AMQP handshake by ctx, which
// amqp091 has no parameter for; the library clears the deadline once the
// connection is open.
func dialContext(ctx context.Context) func(network, addr string) (net.Conn, error) {
	return func(network, addr string) (net.Conn, error) {
		var d net.Dialer
		conn, err := d.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		if deadline, ok := ctx.Deadline(); ok {
			if err := conn.SetDeadline(deadline); err != nil {
				conn.Close()
				return nil, err
			}
		}
		return conn, nil
	}
}
