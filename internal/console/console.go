// Package console prints what people watch and read in a terminal: live
// progress lines and the summary table of a load.
package console

import (
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"golang.org/x/term"

	"github.com/msbench/msbench/internal/load"
	"github.com/msbench/msbench/internal/metrics"
)

// IsTerminal reports whether f is an interactive terminal.
func IsTerminal(f *os.File) bool { return term.IsTerminal(int(f.Fd())) }

// Progress prints load snapshots: one line rewritten in place on a
// terminal, plain lines otherwise (logs and CI keep them all). label says
// what runs, for the runner's nested steps.
type Progress struct {
	W     io.Writer
	TTY   bool
	Label string
}

// Every is how often a display of this kind wants a snapshot.
func (p *Progress) Every() time.Duration {
	if p.TTY {
		return 500 * time.Millisecond
	}
	return 5 * time.Second
}

// Show prints one snapshot.
func (p *Progress) Show(s load.Snapshot) {
	line := fmt.Sprintf("%s%7.1fs  %9d req  %6d in flight  %9.1f req/s  p99 %8.2f ms  errors %d",
		p.prefix(), s.Elapsed.Seconds(), s.Requests, s.InFlight, s.RateRPS, s.P99Ms, s.Errors)
	if p.TTY {
		fmt.Fprintf(p.W, "\r\033[K%s", line)
		return
	}
	fmt.Fprintln(p.W, line)
}

// Done ends the live line so later output starts on a fresh one.
func (p *Progress) Done() {
	if p.TTY {
		fmt.Fprint(p.W, "\r\033[K")
	}
}

func (p *Progress) prefix() string {
	if p.Label == "" {
		return ""
	}
	return p.Label + "  "
}

// Summary prints the table a person reads after a load.
func Summary(w io.Writer, s metrics.Summary) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	row := func(k, format string, args ...any) { fmt.Fprintf(tw, "%s\t"+format+"\n", append([]any{k}, args...)...) }
	model := fmt.Sprintf("closed, %d users, %d connections", s.Users, s.Connections)
	if s.Model == "open" {
		model = fmt.Sprintf("open, %.2f req/s asked, %d connections", s.TargetRPS, s.Connections)
	}
	row("model", "%s", model)
	row("duration", "%.2f s", s.DurationS)
	row("requests", "%d (%d ok, %.2f%%)", s.Requests, s.Successes, 100*s.SuccessRate)
	row("throughput", "%.1f req/s", s.ThroughputRPS)
	if s.Model == "open" {
		verdict := "ok"
		if !s.AchievedRateOK {
			verdict = "TOO LOW: run invalid"
		}
		row("achieved rate", "%.1f req/s (%s); %d unsent, %d late starts", s.AchievedRPS, verdict, s.Unsent, s.LateStarts)
	}
	row("transfer", "%s in, %s out", bytesText(s.BytesIn), bytesText(s.BytesOut))
	fmt.Fprintf(tw, "\nlatency (ms)\tmin\tmean\tp50\tp90\tp95\tp99\tp99.9\tmax\n")
	dist(tw, "corrected", s.Latency)
	if s.Model == "open" {
		dist(tw, "uncorrected", s.Uncorrected)
		dist(tw, "schedule lag", s.ScheduleLag)
	}
	for _, name := range slices.Sorted(maps.Keys(s.ServerTiming)) {
		dist(tw, "server "+name, s.ServerTiming[name])
	}
	if len(s.Errors) > 0 {
		fmt.Fprintf(tw, "\nerrors\tcount\n")
		for _, k := range slices.Sorted(maps.Keys(s.Errors)) {
			fmt.Fprintf(tw, "%s\t%d\n", k, s.Errors[k])
		}
	}
	fmt.Fprintf(tw, "\ngenerator CPU\t%.2f s (%.0f%% of its cores)\n", s.GeneratorCPUS, 100*s.GeneratorCPUUtil)
	tw.Flush()
	for _, warn := range s.Warnings {
		fmt.Fprintf(w, "warning: %s\n", warn)
	}
}

func dist(w io.Writer, name string, d metrics.Distribution) {
	fmt.Fprintf(w, "%s\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\n", name, d.Min, d.Mean, d.P50, d.P90, d.P95, d.P99, d.P999, d.Max)
}

func bytesText(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	f, i := float64(n), 0
	for f >= unit && i < 4 {
		f /= unit
		i++
	}
	return fmt.Sprintf("%.1f %s", f, strings.Split(" KiB MiB GiB TiB", " ")[i])
}
