// Command vswrk measures msbench's load engine against wrk and wrk2 on the
// same nginx: the generator pinned to one core, nginx (one worker) to the
// other, the tools taking turns round by round (the order reversed every
// other round) so that drift of a shared machine falls on all alike. It
// prints each round and the medians of the per-round ratios: msbench's
// closed-model maximum throughput over wrk's, and its CPU per request at a
// fixed rate, both pacings, over wrk2's at the same rate.
//
// wrk2 is no Debian package: give its source (a directory or a bare git
// repository of github.com/giltene/wrk2) with -wrk2-src or WRK2_SRC, and
// vswrk builds it in a temporary directory (make; it bundles LuaJIT and
// needs the OpenSSL and zlib headers). Without it the wrk2 ratios are
// skipped.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"syscall"
	"time"

	"github.com/msbench/msbench/internal/proc"
)

type result struct {
	requests float64
	rps      float64
	cpuS     float64 // user + system of the whole process
	note     string
}

func (r result) cpuPerReqUS() float64 { return 1e6 * r.cpuS / r.requests }

type tool struct {
	name string
	run  func() (result, error)
}

func main() {
	rounds := flag.Int("rounds", 5, "rounds; each runs every tool once")
	duration := flag.Duration("d", 10*time.Second, "length of each load")
	conns := flag.Int("c", 50, "connections")
	rate := flag.Float64("rate", 20000, "fixed rate of the paced runs (msbench open model, wrk2)")
	msbench := flag.String("msbench", "bin/msbench", "msbench binary")
	wrk2Src := flag.String("wrk2-src", os.Getenv("WRK2_SRC"), "wrk2's source: a directory or a bare git repository (default $WRK2_SRC); empty skips wrk2")
	genCPU := flag.String("gen-cpu", "0", "core for the load generator")
	srvCPU := flag.String("server-cpu", "1", "core for nginx")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, *rounds, *duration, *conns, *rate, *msbench, *wrk2Src, *genCPU, *srvCPU); err != nil {
		fmt.Fprintln(os.Stderr, "vswrk:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, rounds int, d time.Duration, conns int, rate float64, msbench, wrk2Src, genCPU, srvCPU string) error {
	for _, t := range []string{"wrk", "nginx", "taskset"} {
		if _, err := exec.LookPath(t); err != nil {
			return fmt.Errorf("%s not found: run scripts/install-deps wrk nginx-light", t)
		}
	}
	wrk2, cleanup, err := buildWrk2(ctx, wrk2Src)
	if err != nil {
		return err
	}
	defer cleanup()
	url, stopNginx, err := startNginx(ctx, srvCPU)
	if err != nil {
		return err
	}
	defer stopNginx()
	secs := strconv.Itoa(int(d.Seconds())) + "s"
	c, r := strconv.Itoa(conns), fmt.Sprint(rate)
	pin := func(args ...string) []string { return append([]string{"taskset", "-c", genCPU}, args...) }
	tools := []tool{
		{"wrk", func() (result, error) { return wrk(ctx, pin("wrk", "-t1", "-c"+c, "-d"+secs, url)...) }},
		{"msbench closed", func() (result, error) {
			return msb(ctx, pin(msbench, "load", "-q", "--json", "-u", c, "-d", secs, url)...)
		}},
		{"msbench " + r + "/s precise", func() (result, error) {
			return msb(ctx, pin(msbench, "load", "-q", "--json", "-r", r, "-c", c, "-d", secs, url)...)
		}},
		{"msbench " + r + "/s coarse", func() (result, error) {
			return msb(ctx, pin(msbench, "load", "-q", "--json", "-r", r, "--pacing", "coarse", "-c", c, "-d", secs, url)...)
		}},
	}
	if wrk2 != "" {
		tools = append(tools, tool{"wrk2 " + r + "/s", func() (result, error) {
			return wrk(ctx, pin(wrk2, "-t1", "-c"+c, "-d"+secs, "-R"+r, url)...)
		}})
	} else {
		fmt.Println("wrk2 skipped: give its source with -wrk2-src or WRK2_SRC (github.com/giltene/wrk2)")
	}
	fmt.Printf("nginx (1 worker) on core %s at %s; generators on core %s; %d rounds of %s, %d connections\n\n", srvCPU, url, genCPU, rounds, d, conns)
	fmt.Printf("%-6s %-26s %10s %12s\n", "round", "tool", "req/s", "CPU µs/req")
	var tput, cpuMax, cpuPrecise, cpuCoarse []float64
	for round := 1; round <= rounds; round++ {
		res := make([]result, len(tools))
		order := make([]int, len(tools))
		for i := range order {
			order[i] = i
		}
		if round%2 == 0 {
			slices.Reverse(order)
		}
		for _, i := range order {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			got, err := tools[i].run()
			if err != nil {
				return fmt.Errorf("round %d %s: %w", round, tools[i].name, err)
			}
			res[i] = got
			fmt.Printf("%-6d %-26s %10.0f %12.2f  %s\n", round, tools[i].name, got.rps, got.cpuPerReqUS(), got.note)
		}
		tput = append(tput, res[1].rps/res[0].rps)
		cpuMax = append(cpuMax, res[1].cpuPerReqUS()/res[0].cpuPerReqUS())
		if wrk2 != "" {
			cpuPrecise = append(cpuPrecise, res[2].cpuPerReqUS()/res[4].cpuPerReqUS())
			cpuCoarse = append(cpuCoarse, res[3].cpuPerReqUS()/res[4].cpuPerReqUS())
		}
	}
	fmt.Printf("\nmedians over %d rounds (ratio per round, then the median):\n", rounds)
	fmt.Printf("  closed max throughput, msbench / wrk:             %.2f  (goal ≥ 0.95)\n", median(tput))
	fmt.Printf("  CPU per request at the maximum, msbench / wrk:    %.2f\n", median(cpuMax))
	if wrk2 == "" {
		fmt.Println("  CPU per request at a fixed rate against wrk2:     skipped (no wrk2)")
		return nil
	}
	fmt.Printf("  CPU per request at %s/s, precise / wrk2:        %.2f  (goal ≤ 1.15)\n", r, median(cpuPrecise))
	fmt.Printf("  CPU per request at %s/s, coarse / wrk2:         %.2f  (goal ≤ 1.00)\n", r, median(cpuCoarse))
	return nil
}

// buildWrk2 builds wrk2 from src in a temporary directory and returns the
// binary; "" when src is empty.
func buildWrk2(ctx context.Context, src string) (string, func(), error) {
	if src == "" {
		return "", func() {}, nil
	}
	dir, err := os.MkdirTemp("", "msbench-wrk2-")
	if err != nil {
		return "", nil, err
	}
	cleanup := func() { os.RemoveAll(dir) }
	copySrc := exec.CommandContext(ctx, "cp", "-a", src+"/.", dir)
	if _, err := os.Stat(filepath.Join(src, "objects")); err == nil {
		// A bare repository, as a mirror keeps it.
		copySrc = exec.CommandContext(ctx, "sh", "-c", `git --git-dir="$1" archive HEAD | tar -x -C "$2"`, "sh", src, dir)
	}
	for _, cmd := range []*exec.Cmd{copySrc, exec.CommandContext(ctx, "make", "-C", dir)} {
		if out, err := cmd.CombinedOutput(); err != nil {
			cleanup()
			return "", nil, fmt.Errorf("build wrk2 from %s: %v: %w\n%s", src, cmd.Args, err, tail(out))
		}
	}
	return filepath.Join(dir, "wrk"), cleanup, nil
}

func tail(b []byte) []byte {
	if len(b) > 2000 {
		return b[len(b)-2000:]
	}
	return b
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func startNginx(ctx context.Context, cpu string) (string, func(), error) {
	dir, err := os.MkdirTemp("", "msbench-vswrk-")
	if err != nil {
		return "", nil, err
	}
	port, err := proc.FreePort()
	if err != nil {
		os.RemoveAll(dir)
		return "", nil, err
	}
	conf := fmt.Sprintf(`worker_processes 1;
daemon off;
pid %[1]s/nginx.pid;
error_log %[1]s/error.log;
events { worker_connections 4096; }
http {
  access_log off;
  client_body_temp_path %[1]s; proxy_temp_path %[1]s; fastcgi_temp_path %[1]s; uwsgi_temp_path %[1]s; scgi_temp_path %[1]s;
  keepalive_requests 100000000;
  server { listen 127.0.0.1:%[2]d; location / { return 200 "hello"; } }
}
`, dir, port)
	if err := os.WriteFile(filepath.Join(dir, "nginx.conf"), []byte(conf), 0o644); err != nil {
		os.RemoveAll(dir)
		return "", nil, err
	}
	p, err := proc.Start(ctx, proc.Spec{Name: "nginx", Path: "taskset", Args: []string{"-c", cpu, "nginx", "-c", filepath.Join(dir, "nginx.conf"), "-p", dir}, LogPath: filepath.Join(dir, "out.log")})
	if err != nil {
		os.RemoveAll(dir)
		return "", nil, err
	}
	stop := func() {
		p.Stop(context.Background(), 3*time.Second)
		os.RemoveAll(dir)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	if err := proc.WaitReady(ctx, p, proc.TCPCheck{Addr: addr}, 10*time.Second); err != nil {
		stop()
		return "", nil, err
	}
	return "http://" + addr + "/", stop, nil
}

var wrkTotal = regexp.MustCompile(`(\d+) requests in ([\d.]+)(\w+)`)

func wrk(ctx context.Context, args ...string) (result, error) {
	out, cpu, err := measure(ctx, args...)
	if err != nil {
		return result{}, fmt.Errorf("%w: %s", err, out)
	}
	m := wrkTotal.FindStringSubmatch(string(out))
	if m == nil {
		return result{}, fmt.Errorf("unexpected wrk output: %s", out)
	}
	n, _ := strconv.ParseFloat(m[1], 64)
	secs, _ := strconv.ParseFloat(m[2], 64)
	switch m[3] {
	case "ms":
		secs /= 1000
	case "m":
		secs *= 60
	}
	return result{requests: n, rps: n / secs, cpuS: cpu}, nil
}

func msb(ctx context.Context, args ...string) (result, error) {
	out, cpu, err := measure(ctx, args...)
	if err != nil {
		return result{}, fmt.Errorf("%w: %s", err, out)
	}
	var s struct {
		Requests   float64 `json:"requests"`
		Throughput float64 `json:"throughput_rps"`
		Valid      bool    `json:"valid"`
	}
	if err := json.Unmarshal(out, &s); err != nil {
		return result{}, fmt.Errorf("msbench output: %w", err)
	}
	r := result{requests: s.Requests, rps: s.Throughput, cpuS: cpu}
	if !s.Valid {
		// Kept: its CPU per request still counts, but it is shown.
		r.note = "rate not achieved"
	}
	return r, nil
}

// measure runs a command and returns its output and the CPU time the
// kernel accounted to it and its children.
func measure(ctx context.Context, args ...string) ([]byte, float64, error) {
	cmd := exec.CommandContext(ctx, args[0], args[1:]...)
	out, err := cmd.Output()
	if cmd.ProcessState == nil {
		return out, 0, err
	}
	ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		return out, 0, errors.New("no rusage")
	}
	cpu := time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
	return out, cpu, err
}
