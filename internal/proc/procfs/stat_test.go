package procfs

import (
	"os"
	"testing"
)

func TestParseStat(t *testing.T) {
	tail := " 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31 32 33 34 35 36 37 38 39 40 41 42 43 44 45 46 47 48 49 50\n"
	tests := []struct {
		name    string
		in      string
		want    Stat
		wantErr bool
	}{
		{
			name: "plain",
			in:   "42 (sleep) S" + tail,
			want: Stat{PID: 42, Comm: "sleep", State: 'S', PPID: 1, PGRP: 2, UTime: 11, STime: 12, CUTime: 13, CSTime: 14, StartTime: 19, RSSPages: 21},
		},
		{
			name: "comm with spaces and parentheses",
			in:   "7 (my (odd) name) Z" + tail,
			want: Stat{PID: 7, Comm: "my (odd) name", State: 'Z', PPID: 1, PGRP: 2, UTime: 11, STime: 12, CUTime: 13, CSTime: 14, StartTime: 19, RSSPages: 21},
		},
		{name: "truncated", in: "7 (x) S 1 2 3", wantErr: true},
		{name: "no comm", in: "7 x S 1 2 3", wantErr: true},
		{name: "bad number", in: "7 (x) S one" + tail[2:], wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseStat([]byte(tt.in))
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tt.wantErr)
			}
			if !tt.wantErr && got != tt.want {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestReadStatSelfAndDescendants(t *testing.T) {
	self, err := ReadStat(os.Getpid())
	if err != nil || self.Dead() || self.PPID != os.Getppid() {
		t.Fatalf("self stat %+v, %v", self, err)
	}
	all, err := All()
	if err != nil {
		t.Fatal(err)
	}
	tree := Descendants(all, os.Getppid())
	found := false
	for _, s := range tree {
		found = found || s.PID == os.Getpid()
	}
	if len(tree) == 0 || tree[0].PID != os.Getppid() || !found {
		t.Errorf("parent's tree %v does not start at the parent and hold us", tree)
	}
	if Descendants(all, 1<<30) != nil {
		t.Error("tree of a missing pid is not empty")
	}
}
