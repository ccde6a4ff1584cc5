package metrics

import (
	"fmt"
	"strings"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// Distribution summarises one latency histogram in milliseconds.
type Distribution struct {
	Count int64   `json:"count"`
	Min   float64 `json:"min"`
	Mean  float64 `json:"mean"`
	P25   float64 `json:"p25"`
	P50   float64 `json:"p50"`
	P75   float64 `json:"p75"`
	P90   float64 `json:"p90"`
	P95   float64 `json:"p95"`
	P99   float64 `json:"p99"`
	P999  float64 `json:"p999"`
	Max   float64 `json:"max"`
}

// KernelReceiveStamp is the clock of every latency msbench measures: the
// kernel's receive timestamp (SO_TIMESTAMPNS) of an answer's last bytes,
// so neither model counts the generator's own delay in reading them.
const KernelReceiveStamp = "kernel receive stamp"

// Summary is what summary.json holds for one load: the keys are the
// project's published interface, read by the runner and the report.
type Summary struct {
	Model string `json:"model"`
	// Clock says what ends a request's latency, the same in every model:
	// KernelReceiveStamp. Unstamped answers (none on Linux sockets with
	// SO_TIMESTAMPNS) ended when they were read instead.
	Clock          string    `json:"clock,omitempty"`
	Unstamped      int64     `json:"unstamped,omitempty"`
	StartedAt      time.Time `json:"started_at"`
	EndedAt        time.Time `json:"ended_at"`
	DurationS      float64   `json:"duration_s"`
	Users          int       `json:"users,omitempty"`
	Connections    int       `json:"connections"`
	TargetRPS      float64   `json:"target_rps,omitempty"`
	Scheduled      int64     `json:"scheduled,omitempty"`
	Unsent         int64     `json:"unsent,omitempty"`
	AchievedRPS    float64   `json:"achieved_rps"`
	AchievedRateOK bool      `json:"achieved_rate_ok"`
	Valid          bool      `json:"valid"`
	// SuccessRateOK is false when the success rate fell under the run's
	// minimum, which also makes it invalid.
	SuccessRateOK bool `json:"success_rate_ok"`

	Requests      int64            `json:"requests"`
	Successes     int64            `json:"successes"`
	SuccessRate   float64          `json:"success_rate"`
	Errors        map[string]int64 `json:"errors"`
	StatusCodes   map[string]int64 `json:"status_codes"`
	ThroughputRPS float64          `json:"throughput_rps"`
	BytesIn       int64            `json:"bytes_in"`
	BytesOut      int64            `json:"bytes_out"`

	Latency               Distribution            `json:"latency_ms"`
	Uncorrected           Distribution            `json:"uncorrected_latency_ms"`
	ScheduleLag           Distribution            `json:"schedule_lag_ms"`
	LateStarts            int64                   `json:"late_starts"`
	ServerTiming          map[string]Distribution `json:"server_timing_ms"`
	ServerTimingMalformed int64                   `json:"server_timing_malformed,omitempty"`
	ServerTimingDropped   int64                   `json:"server_timing_dropped,omitempty"`

	GeneratorCPUS float64 `json:"generator_cpu_s"`
	// GeneratorCPUUtil is GeneratorCPUS over the duration: the share of
	// one core, since one loop sends every request however many cores
	// msbench has.
	GeneratorCPUUtil float64 `json:"generator_cpu_utilization"`
	// GeneratorCPUs are the cores the generator ran on (its CPU affinity),
	// e.g. "0" when msbench was placed on core 0.
	GeneratorCPUs string   `json:"generator_cpus,omitempty"`
	Warnings      []string `json:"warnings"`

	// Histograms holds the HDR histograms (V2 compressed, base64, as HdrHistogram's Encode writes them) of
	// latency, uncorrected latency, schedule lag and each Server-Timing
	// metric, so that repetitions, and the parts of one load (Merge), can
	// be merged exactly.
	Histograms map[string]string `json:"hdr"`
}

func distribution(h *hdrhistogram.Histogram) Distribution {
	if h.TotalCount() == 0 {
		return Distribution{}
	}
	ms := func(ns int64) float64 { return float64(ns) / 1e6 }
	return Distribution{
		Count: h.TotalCount(),
		Min:   ms(h.Min()),
		Mean:  h.Mean() / 1e6,
		P25:   ms(h.ValueAtQuantile(25)),
		P50:   ms(h.ValueAtQuantile(50)),
		P75:   ms(h.ValueAtQuantile(75)),
		P90:   ms(h.ValueAtQuantile(90)),
		P95:   ms(h.ValueAtQuantile(95)),
		P99:   ms(h.ValueAtQuantile(99)),
		P999:  ms(h.ValueAtQuantile(99.9)),
		Max:   ms(h.Max()),
	}
}

// The keys of Summary.Histograms: latency from the intended send time,
// latency from the actual send (uncorrected), schedule lag, and each
// Server-Timing metric after its prefix.
const (
	histLatency      = "latency"
	histUncorrected  = "uncorrected"
	histScheduleLag  = "schedule_lag"
	histServerTiming = "server_timing."
)

func cutServerTiming(key string) (string, bool) { return strings.CutPrefix(key, histServerTiming) }

// DecodeHistogram reads a histogram from Summary.Histograms.
func DecodeHistogram(encoded string) (*hdrhistogram.Histogram, error) {
	h, err := hdrhistogram.Decode([]byte(encoded))
	if err != nil {
		return nil, fmt.Errorf("decode histogram: %w", err)
	}
	return h, nil
}

func encode(h *hdrhistogram.Histogram) string {
	b, err := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	if err != nil {
		// Encoding writes to memory only; failure means a broken histogram,
		// which the summary can live without.
		return ""
	}
	return string(b)
}
