package results

import "time"

// Slices is slices.json of a step measured interleaved: the slices its
// load was cut into, in the order they ran, each a turn this variant took
// while the repetition's other variants waited. A step measured in one
// piece has none.
type Slices struct {
	// Rounds is how many turns each variant took; Warmup how much of each
	// slice was sent before the measured part, and not counted.
	Rounds int           `json:"rounds"`
	Warmup time.Duration `json:"warmup_ns"`
	Slices []Slice       `json:"slices"`
}

// Slice is one turn: the round, the variant's place in the round's
// order (from 1, of Of), and what its measured part sent.
type Slice struct {
	Number    int       `json:"slice"`
	Round     int       `json:"round"`
	Position  int       `json:"position"`
	Of        int       `json:"of"`
	StartedAt time.Time `json:"started_at"`
	DurationS float64   `json:"duration_s"`
	Requests  int64     `json:"requests"`
	P50Ms     float64   `json:"p50_ms"`
	P99Ms     float64   `json:"p99_ms"`
	Valid     bool      `json:"valid"`
	// Lead: the slice's warm-up was sent by its own users, who went on
	// into the measured part without a pause; else it was a load of its
	// own, whose last answers came before the measured part started.
	Lead bool `json:"lead,omitempty"`
}

const slicesFile jsonFile[Slices] = "slices.json"

func (d StepDir) WriteSlices(s Slices) error { return slicesFile.write(string(d), s) }

// ReadSlices returns nil for a step measured in one piece.
func (d StepDir) ReadSlices() (*Slices, error) { return slicesFile.readOptional(string(d)) }
