package servertiming

import (
	"testing"
)

func TestParse(t *testing.T) {
	type m struct {
		name string
		dur  float64
	}
	tests := []struct {
		header    string
		want      []m
		malformed int
	}{
		{"handler;dur=1.25, rpc;dur=0.5, fn;dur=0.125", []m{{"handler", 1.25}, {"rpc", 0.5}, {"fn", 0.125}}, 0},
		{"db;desc=\"a, b; c\";dur=3", []m{{"db", 3}}, 0},
		{"cache;desc=hit", nil, 0},
		{"total;DUR=7", []m{{"total", 7}}, 0},
		{"x;dur=\"2.5\"", []m{{"x", 2.5}}, 0},
		{"a;dur=1;dur=9", []m{{"a", 1}}, 0},
		{"bad;dur=abc, good;dur=2", []m{{"good", 2}}, 1},
		{"neg;dur=-1", nil, 1},
		{"nan;dur=NaN", nil, 1},
		{"empty;dur=", nil, 1},
		{";dur=4", nil, 1},
		{"sp ace;dur=1", nil, 1},
		{"", nil, 0},
		{" , ,", nil, 0},
		{"unterminated;desc=\"oops, next;dur=1", nil, 0},
		{"big;dur=1e3", []m{{"big", 1000}}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.header, func(t *testing.T) {
			got, malformed := Parse(nil, []byte(tt.header))
			if malformed != tt.malformed {
				t.Errorf("malformed = %d, want %d", malformed, tt.malformed)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("got %d metrics %v, want %v", len(got), got, tt.want)
			}
			for i, w := range tt.want {
				if string(got[i].Name) != w.name || got[i].Dur != w.dur {
					t.Errorf("metric %d = %s/%v, want %s/%v", i, got[i].Name, got[i].Dur, w.name, w.dur)
				}
			}
		})
	}
}

func TestParseDoesNotAllocate(t *testing.T) {
	header := []byte(`handler;dur=1.25, rpc;dur=0.5;desc="x", fn;dur=0.125`)
	dst := make([]Metric, 0, 8)
	allocs := testing.AllocsPerRun(1000, func() {
		dst, _ = Parse(dst[:0], header)
	})
	if allocs != 0 {
		t.Fatalf("Parse allocates %v times per call", allocs)
	}
}

func FuzzParse(f *testing.F) {
	f.Add("handler;dur=1.25, rpc;dur=0.5")
	f.Add(`a;desc="\"q\"";dur=1`)
	f.Fuzz(func(t *testing.T, s string) {
		got, _ := Parse(nil, []byte(s))
		for _, m := range got {
			if len(m.Name) == 0 || m.Dur < 0 {
				t.Fatalf("bad metric %+v from %q", m, s)
			}
		}
	})
}
