package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/msbench/msbench/internal/console"
	"github.com/msbench/msbench/internal/load"
	"github.com/msbench/msbench/internal/loadspec"
	"github.com/msbench/msbench/internal/pacer"
	"github.com/msbench/msbench/internal/placement"
	"github.com/msbench/msbench/internal/records"
	"github.com/msbench/msbench/internal/results"
)

type loadFlags struct {
	users        int
	think        string
	duration     time.Duration
	requests     int64
	iterations   int
	rate         float64
	rateSet      bool // -r 0 is a mistake to report, not the closed model
	stages       string
	arrivals     string
	pacing       string
	tick         time.Duration
	insecure     bool
	seed         uint64
	connections  int
	method       string
	headers      []string
	body         string
	form         []string
	timeout      time.Duration
	expectStatus string
	expectBody   string
	minSuccess   string
	out          string
	json         bool
	quiet        bool
	cpus         string
	allowRemote  bool
}

func newLoadCmd() *cobra.Command {
	var f loadFlags
	cmd := &cobra.Command{
		Use:   "load [flags] URL",
		Short: "Drive HTTP/1.1 load at one URL and summarise it",
		Long: `Drive HTTP/1.1 load at one URL over keep-alive connections and summarise it.

Closed model (default): --users virtual users each send a request, wait for the
answer, pause --think, and repeat until --duration, --requests (shared) or
--iterations (per user) ends the load.

Open model (--rate or --stages): requests arrive on a schedule whatever the
server does. Latency is measured from each request's intended send time, so a
stalled server shows in the percentiles (coordinated omission corrected); the
service time from the actual send is kept as "uncorrected". When every
connection is busy, arrivals wait with their intended time; none is dropped.
A run that achieves under 95% of the asked rate is marked invalid.

Every load is bounded: without --duration, --requests or --iterations it runs
for 10 s; bounded by --requests or --iterations alone, it stops after 1 h at
most (as k6's maxDuration, an hour rather than ten minutes), and says so when
that cut it short. A think time must be shorter than that time bound, a
--timeout at most 1 h, --users at most 100,000. In the open model --duration
bounds the sending in wall time whatever the rate (plus a tenth, at most
--timeout, for a generator briefly starved of CPU): arrivals not sent by then
are counted as unsent, and the run invalid. Requests in flight then get their
answer or time out, so a run ends at most --timeout after its duration.

Load goes only to this machine: the URL's host must be loopback (127.0.0.0/8,
::1, or a name such as localhost whose every address is), checked before any
connection and then dialled at the address checked. --allow-remote lifts it,
for a server you are entitled to load.

The method must be an HTTP token and each --header a token name with a value
free of control characters (CR and LF would split the request in two). A body
read with @file comes from a regular file of at most 64 MiB, and so does a
--form body, files and fields together.

A run in which fewer requests succeeded than --min-success (default 1%) is
invalid: a refused port or a wrong URL measures the failure, not the server.

Exit status: 0 done, 1 failure (records not written, or the success rate under
--min-success), 2 bad usage, 130 interrupted (what was measured is still
summarised and saved).`,
		Example: `  msbench load -u 50 -d 30s http://127.0.0.1:8080/
  msbench load -r 1000 -d 1m --arrivals poisson -c 100 http://127.0.0.1:8080/api
  msbench load --stages 30s:500,1m:500,30s:0 http://127.0.0.1:8080/
  msbench load -u 10 --iterations 10 --think 1s http://127.0.0.1:3000/universities?country=Finland
  msbench load -m POST --form image=@cat.png -n 1000 -u 8 --out results/upload http://127.0.0.1:8080/images`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usagef("load takes exactly one URL, got %d arguments", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error { return runLoad(cmd, f, args[0]) },
	}
	fl := cmd.Flags()
	fl.SortFlags = false
	fl.IntVarP(&f.users, "users", "u", 0, "closed model: virtual users (default 10)")
	fl.StringVar(&f.think, "think", "", "closed model: pause after each answer, fixed (1s) or a uniform range (500ms-1s)")
	fl.DurationVarP(&f.duration, "duration", "d", 0, "how long to send (default 10s when no other bound is given)")
	fl.Int64VarP(&f.requests, "requests", "n", 0, "total requests across all users, then stop")
	fl.IntVar(&f.iterations, "iterations", 0, "closed model: requests per user, then that user stops")
	fl.Float64VarP(&f.rate, "rate", "r", 0, "open model: requests per second in total (fractions allowed); with --stages, the starting rate")
	fl.StringVar(&f.stages, "stages", "", "open model: linear ramps DURATION:RATE,... e.g. 30s:500,1m:500,10s:0")
	fl.StringVar(&f.arrivals, "arrivals", "uniform", "open model: uniform (evenly spaced) or poisson")
	fl.StringVar(&f.pacing, "pacing", "precise", "open model: precise (a high-resolution timer per arrival; arrivals within 250µs of one another share a wake-up) or coarse (one wake-up per --tick sends every arrival due and reads every answer: less CPU at high rates, requests up to a tick late)")
	fl.DurationVar(&f.tick, "tick", 0, "coarse pacing: the grid of wake-ups (default 500µs)")
	fl.Uint64Var(&f.seed, "seed", 1, "seed for poisson arrivals and think-time draws")
	fl.IntVarP(&f.connections, "connections", "c", 0, "keep-alive connections, the most requests in flight (default: users; open model 100)")
	fl.StringVarP(&f.method, "method", "m", "GET", "HTTP method")
	fl.StringArrayVarP(&f.headers, "header", "H", nil, "request header 'Name: value' (repeatable)")
	fl.StringVar(&f.body, "body", "", "request body: text, or @file to read it (a regular file, at most 64 MiB)")
	fl.StringArrayVar(&f.form, "form", nil, "multipart/form-data field name=@file or name=value (repeatable; at most 64 MiB in all)")
	fl.DurationVar(&f.timeout, "timeout", 30*time.Second, "per request; a timed-out request is an error with latency = timeout")
	fl.BoolVarP(&f.insecure, "insecure", "k", false, "https: accept any server certificate (self-signed test servers)")
	fl.StringVar(&f.expectStatus, "expect-status", "2xx", "status codes that count as success, e.g. 200,201 or 200-299 or 2xx,304")
	fl.StringVar(&f.expectBody, "expect-body", "", "a success must contain this substring")
	fl.StringVar(&f.minSuccess, "min-success", "1%", "the run is invalid, and msbench exits 1, when fewer requests succeed: a share (0.5) or a percentage (50%); 0 accepts any")
	fl.StringVar(&f.out, "out", "", "directory for records.parquet (every request) and summary.json")
	fl.BoolVar(&f.json, "json", false, "print summary.json to stdout instead of the table")
	fl.BoolVarP(&f.quiet, "quiet", "q", false, "no progress output")
	fl.BoolVar(&f.allowRemote, "allow-remote", false, "allow a URL whose host is not this machine (refused by default)")
	fl.StringVar(&f.cpus, "cpus", "", "run the generator on these cores only, e.g. 0, 0-1 or 0,2 (every thread of msbench, by CPU affinity), leaving the others to the server")
	return cmd
}

func runLoad(cmd *cobra.Command, f loadFlags, rawURL string) error {
	f.rateSet = cmd.Flags().Changed("rate")
	cfg, err := f.config(rawURL)
	if err != nil {
		return err
	}
	engine, err := load.New(cfg)
	if err != nil {
		return usageError{err}
	}
	if f.cpus != "" {
		cpus, err := placement.Parse(f.cpus)
		if err == nil {
			err = placement.Check(cpus)
		}
		if err != nil {
			return usagef("--cpus: %v", err)
		}
		// Before the engine starts its threads; every later thread
		// inherits the placement. msbench exits after the load, so
		// nothing is restored.
		if _, err := placement.Self(cpus); err != nil {
			return fmt.Errorf("--cpus: %w", err)
		}
	}
	var opts load.Options
	var writer *records.Writer
	if f.out != "" {
		writer, err = results.StepDir(f.out).CreateRecords(engine.Names(), engine.TargetNames())
		if err != nil {
			return err
		}
		opts.Sink = writer
	}
	stderr := cmd.ErrOrStderr()
	progress := &console.Progress{W: stderr, TTY: isTerminal(stderr)}
	if !f.quiet {
		opts.Progress, opts.ProgressEvery = progress.Show, progress.Every()
	}
	ctx := cmd.Context()
	summary, runErr := engine.Run(ctx, opts)
	if !f.quiet {
		progress.Done()
	}
	if writer != nil {
		runErr = errors.Join(runErr, writer.Close())
		runErr = errors.Join(runErr, results.StepDir(f.out).WriteSummary(summary))
	}
	if f.json {
		enc := json.NewEncoder(cmd.OutOrStdout())
		enc.SetIndent("", "  ")
		if err := enc.Encode(summary); err != nil {
			return err
		}
	} else {
		console.Summary(cmd.OutOrStdout(), summary)
		if f.out != "" {
			fmt.Fprintf(cmd.OutOrStdout(), "records: %s\n", results.StepDir(f.out).RecordsPath())
		}
	}
	if runErr != nil {
		return runErr
	}
	if ctx.Err() != nil {
		return errInterrupted
	}
	if !summary.SuccessRateOK {
		return fmt.Errorf("%d of %d requests succeeded, under --min-success %s (the errors are in the summary)", summary.Successes, summary.Requests, f.minSuccess)
	}
	return nil
}

// config turns flags into a load configuration; every mistake is a usage
// error naming the flag.
func (f loadFlags) config(rawURL string) (load.Config, error) {
	if _, err := load.ValidateURL(rawURL); err != nil {
		return load.Config{}, usageError{err}
	}
	if f.timeout <= 0 {
		return load.Config{}, usagef("--timeout must be positive")
	}
	if f.body != "" && len(f.form) > 0 {
		return load.Config{}, usagef("--body and --form both set the body: choose one")
	}
	target, err := f.target(rawURL)
	if err != nil {
		return load.Config{}, err
	}
	spec := loadspec.Spec{
		Open:        f.rateSet || f.stages != "",
		Users:       f.users,
		Rate:        f.rate,
		Seed:        f.seed,
		Connections: f.connections,
		Duration:    f.duration,
		Requests:    f.requests,
		Iterations:  f.iterations,
		Timeout:     f.timeout,
		Tick:        f.tick,
		Insecure:    f.insecure,
		Targets:     []load.Target{target},
		AllowRemote: f.allowRemote,
	}
	minSuccess, err := parseShare(f.minSuccess)
	if err != nil {
		return load.Config{}, usagef("--min-success %q: %v", f.minSuccess, err)
	}
	spec.MinSuccess = &minSuccess
	if spec.Arrivals, err = pacer.ParseArrivals(f.arrivals); err != nil {
		return load.Config{}, usagef("--arrivals: %v", err)
	}
	if spec.Pacing, err = load.ParsePacing(f.pacing); err != nil {
		return load.Config{}, usageError{err}
	}
	if f.stages != "" {
		if spec.Stages, err = loadspec.ParseStages(f.stages); err != nil {
			return load.Config{}, usagef("--stages: %v", err)
		}
	}
	if spec.Think, err = loadspec.ParseThink(f.think); err != nil {
		return load.Config{}, usagef("--think: %v", err)
	}
	cfg, err := spec.Config()
	if err != nil {
		return load.Config{}, usageError{err}
	}
	return cfg, nil
}

func (f loadFlags) target(rawURL string) (load.Target, error) {
	status, err := load.ParseStatusSet(f.expectStatus)
	if err != nil {
		return load.Target{}, usagef("--expect-status: %v", err)
	}
	t := load.Target{
		Name:         strings.ToUpper(f.method) + " " + rawURL,
		Method:       strings.ToUpper(f.method),
		URL:          rawURL,
		ExpectStatus: status,
		ExpectBody:   []byte(f.expectBody),
	}
	if err := load.CheckMethod(t.Method); err != nil {
		return t, usagef("--method: %v", err)
	}
	for _, h := range f.headers {
		name, value, ok := strings.Cut(h, ":")
		if !ok || strings.TrimSpace(name) == "" {
			return t, usagef("--header %q: want 'Name: value'", h)
		}
		name, value = strings.TrimSpace(name), strings.TrimSpace(value)
		if err := load.CheckHeader(name, value); err != nil {
			return t, usagef("--header: %v", err)
		}
		t.Header = append(t.Header, [2]string{name, value})
	}
	switch {
	case strings.HasPrefix(f.body, "@"):
		b, err := loadspec.ReadBodyFile(f.body[1:])
		if err != nil {
			return t, usagef("--body: %v", err)
		}
		t.Body = b
	case f.body != "":
		t.Body = []byte(f.body)
	case len(f.form) > 0:
		var fields []loadspec.FormField
		for _, s := range f.form {
			field, err := loadspec.ParseFormField(s)
			if err != nil {
				return t, usagef("--form: %v", err)
			}
			fields = append(fields, field)
		}
		body, contentType, err := loadspec.MultipartBody(fields)
		if err != nil {
			return t, usagef("--form: %v", err)
		}
		t.Body = body
		t.Header = append(t.Header, [2]string{"Content-Type", contentType})
	}
	return t, nil
}

// parseShare reads a share of the whole as 0.25 or 25%.
func parseShare(s string) (float64, error) {
	num, pct := strings.CutSuffix(strings.TrimSpace(s), "%")
	v, err := strconv.ParseFloat(num, 64)
	if err != nil {
		return 0, errors.New("want a share such as 0.01 or a percentage such as 1%")
	}
	if pct {
		v /= 100
	}
	if !(v >= 0 && v <= 1) {
		return 0, errors.New("must lie between 0 and 1 (0% and 100%)")
	}
	return v, nil
}
