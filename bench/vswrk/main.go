// Command vswrk measures msbench's load engine against wrk on the same
// nginx: the generator pinned to one core, nginx (one worker) to the other,
// the tools alternating round by round so that drift of a shared machine
// falls on both alike. It prints each round and the medians of the ratios.
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

func main() {
	rounds := flag.Int("rounds", 5, "rounds; each runs every tool once")
	duration := flag.Duration("d", 10*time.Second, "length of each load")
	conns := flag.Int("c", 50, "connections")
	rate := flag.Float64("rate", 20000, "fixed rate for msbench's open-model run")
	msbench := flag.String("msbench", "bin/msbench", "msbench binary")
	genCPU := flag.String("gen-cpu", "0", "core for the load generator")
	srvCPU := flag.String("server-cpu", "1", "core for nginx")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, *rounds, *duration, *conns, *rate, *msbench, *genCPU, *srvCPU); err != nil {
		fmt.Fprintln(os.Stderr, "vswrk:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, rounds int, d time.Duration, conns int, rate float64, msbench, genCPU, srvCPU string) error {
	for _, tool := range []string{"wrk", "nginx", "taskset"} {
		if _, err := exec.LookPath(tool); err != nil {
			return fmt.Errorf("%s not found: run scripts/install-deps wrk nginx-light", tool)
		}
	}
	url, stopNginx, err := startNginx(ctx, srvCPU)
	if err != nil {
		return err
	}
	defer stopNginx()
	secs := strconv.Itoa(int(d.Seconds())) + "s"
	tools := []struct {
		name string
		run  func() (result, error)
	}{
		{"wrk", func() (result, error) {
			return wrk(ctx, "taskset", "-c", genCPU, "wrk", "-t1", "-c"+strconv.Itoa(conns), "-d"+secs, url)
		}},
		{"msbench max", func() (result, error) {
			return msb(ctx, "taskset", "-c", genCPU, msbench, "load", "-q", "--json", "-u", strconv.Itoa(conns), "-d", secs, url)
		}},
		{fmt.Sprintf("msbench %.0f/s precise", rate), func() (result, error) {
			return msb(ctx, "taskset", "-c", genCPU, msbench, "load", "-q", "--json", "-r", fmt.Sprint(rate), "-c", strconv.Itoa(conns), "-d", secs, url)
		}},
		{fmt.Sprintf("msbench %.0f/s coarse", rate), func() (result, error) {
			return msb(ctx, "taskset", "-c", genCPU, msbench, "load", "-q", "--json", "-r", fmt.Sprint(rate), "--pacing", "coarse", "-c", strconv.Itoa(conns), "-d", secs, url)
		}},
	}
	fmt.Printf("nginx (1 worker) on core %s at %s; generators on core %s; %d rounds of %s, %d connections\n\n", srvCPU, url, genCPU, rounds, d, conns)
	fmt.Printf("%-6s %-26s %10s %12s\n", "round", "tool", "req/s", "CPU µs/req")
	var tputRatio, cpuRatioMax, cpuRatioPrecise, cpuRatioCoarse []float64
	for r := 1; r <= rounds; r++ {
		res := make([]result, len(tools))
		order := []int{0, 1, 2, 3}
		if r%2 == 0 {
			slices.Reverse(order)
		}
		for _, i := range order {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			got, err := tools[i].run()
			if err != nil {
				return fmt.Errorf("round %d %s: %w", r, tools[i].name, err)
			}
			res[i] = got
			fmt.Printf("%-6d %-26s %10.0f %12.2f  %s\n", r, tools[i].name, got.rps, got.cpuPerReqUS(), got.note)
		}
		tputRatio = append(tputRatio, res[1].rps/res[0].rps)
		cpuRatioMax = append(cpuRatioMax, res[1].cpuPerReqUS()/res[0].cpuPerReqUS())
		cpuRatioPrecise = append(cpuRatioPrecise, res[2].cpuPerReqUS()/res[0].cpuPerReqUS())
		cpuRatioCoarse = append(cpuRatioCoarse, res[3].cpuPerReqUS()/res[0].cpuPerReqUS())
	}
	fmt.Printf("\nmedians over %d rounds (ratio per round, then the median):\n", rounds)
	fmt.Printf("  max throughput, msbench / wrk:                 %.2f  (target ≥ 0.60)\n", median(tputRatio))
	fmt.Printf("  CPU per request, msbench max / wrk max:        %.2f  (target ≤ 2)\n", median(cpuRatioMax))
	fmt.Printf("  CPU per request, msbench %.0f/s precise / wrk max: %.2f  (target ≤ 2)\n", rate, median(cpuRatioPrecise))
	fmt.Printf("  CPU per request, msbench %.0f/s coarse / wrk max:  %.2f  (target ≤ 2)\n", rate, median(cpuRatioCoarse))
	return nil
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
