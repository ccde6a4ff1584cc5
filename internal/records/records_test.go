package records

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/msbench/msbench/internal/metrics"
)

// request is the i-th request of a synthetic load: every field distinct
// from row to row, every 7th failing, two Server-Timing metrics each.
func request(i int, names *metrics.Names) metrics.Record {
	db, _ := names.Index([]byte("db"))
	app, _ := names.Index([]byte("app"))
	at := int64(i) * 1_000_000
	r := metrics.Record{Seq: uint64(i), Intended: at, Sent: at + 1000, Done: at + 2_000_000 + int64(i%1000)*1000,
		BytesIn: int64(100 + i%50), BytesOut: 20, Status: 200, Tag: uint64(i % 3), NTimings: 2}
	r.Timings[0] = metrics.Timing{Metric: db, Ms: float64(i) / 100}
	r.Timings[1] = metrics.Timing{Metric: app, Ms: 0.5}
	if i%7 == 0 {
		r.Status, r.Err = 503, metrics.Status
	}
	return r
}

// writeRecords writes n requests through Writer, in batches as the load
// engine does, and returns the file's path.
func writeRecords(t testing.TB, dir string, n int) string {
	t.Helper()
	var names metrics.Names
	path := filepath.Join(dir, "records.parquet")
	w, err := Create(path, &names, []string{"GET /"})
	if err != nil {
		t.Fatal(err)
	}
	batch := make([]metrics.Record, 0, 4096)
	for i := range n {
		batch = append(batch, request(i, &names))
		if len(batch) == cap(batch) || i == n-1 {
			if err := w.Write(batch); err != nil {
				t.Fatal(err)
			}
			batch = batch[:0]
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// Read and ReadOutcomes give back what was written, row for row, across
// read batches and row groups; a row's Server-Timing list is its own, not
// overwritten by a later batch.
func TestReadBack(t *testing.T) {
	n := rowsPerGroup + 2*readBatch + 3
	path := writeRecords(t, t.TempDir(), n)
	rows, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	outs, err := ReadOutcomes(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != n || len(outs) != n {
		t.Fatalf("%d rows and %d outcomes, want %d", len(rows), len(outs), n)
	}
	var names metrics.Names
	for i := range n {
		req := request(i, &names)
		row, out := rows[i], outs[i]
		wantErr := req.Err.String()
		if row.Seq != int64(i) || row.Intended != req.Intended || row.LatencyMs != float64(req.Latency())/1e6 || row.Error != wantErr ||
			row.Status != int32(req.Status) || row.BytesIn != req.BytesIn || row.Target != "GET /" {
			t.Fatalf("row %d: %+v, want the request %+v", i, row, req)
		}
		if want := []Timing{{"db", float64(i) / 100}, {"app", 0.5}}; !slices.Equal(row.ServerTiming, want) {
			t.Fatalf("row %d: Server-Timing %v, want %v", i, row.ServerTiming, want)
		}
		if want := (Outcome{Seq: row.Seq, Intended: row.Intended, LatencyMs: row.LatencyMs, Error: row.Error}); out != want {
			t.Fatalf("outcome %d: %+v, want %+v", i, out, want)
		}
	}
}

// Outcome is read from Row's columns by name: each must be one of Row's,
// of the kind it is read as, or a rename on one side would fail every
// comparison at run time.
func TestOutcomeColumnsAreRows(t *testing.T) {
	row := parquet.SchemaOf(Row{})
	for _, col := range outcomeColumns {
		leaf, ok := row.Lookup(col.name)
		if !ok || leaf.Node.Type().Kind() != col.kind || leaf.MaxRepetitionLevel > 0 || leaf.MaxDefinitionLevel > 0 {
			t.Errorf("column %s of %s values is not one of Row's required columns", col.name, col.kind)
		}
	}
}

// A file that is missing, not Parquet, or cut short is an error naming
// it, never a panic.
func TestReadDamaged(t *testing.T) {
	dir := t.TempDir()
	whole, err := os.ReadFile(writeRecords(t, dir, 1000))
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{"text.parquet": []byte("not parquet at all"), "cut.parquet": whole[:len(whole)/2]}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"text.parquet", "cut.parquet", "missing.parquet"} {
		path := filepath.Join(dir, name)
		if _, err := ReadOutcomes(path); err == nil || !strings.Contains(err.Error(), path) {
			t.Errorf("ReadOutcomes(%s) = %v, want an error naming the file", name, err)
		}
		if _, err := Read(path); err == nil {
			t.Errorf("Read(%s) read a damaged file", name)
		}
	}
	if _, err := ReadOutcomes(filepath.Join(dir, "missing.parquet")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a missing file: %v, want fs.ErrNotExist", err)
	}
}

// BenchmarkRead reads a whole run of a million requests written by
// Writer: every column (Read), and the four a comparison needs
// (ReadOutcomes).
func BenchmarkRead(b *testing.B) {
	path := writeRecords(b, b.TempDir(), 1_000_000)
	if st, err := os.Stat(path); err == nil {
		b.Logf("%s: %.1f MB", path, float64(st.Size())/1e6)
	}
	for _, bench := range []struct {
		name string
		read func(string) (int, error)
	}{
		{"columns=all", func(p string) (int, error) { rows, err := Read(p); return len(rows), err }},
		{"columns=outcome", func(p string) (int, error) { rows, err := ReadOutcomes(p); return len(rows), err }},
	} {
		b.Run(bench.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if n, err := bench.read(path); err != nil || n != 1_000_000 {
					b.Fatal(fmt.Sprint(n, " rows: ", err))
				}
			}
			b.ReportMetric(float64(1_000_000*b.N)/b.Elapsed().Seconds(), "rows/s")
		})
	}
}

// Segments of one file come from engines of their own: each with its own
// Server-Timing names and its own numbering and clock from 0. Written
// through Begin, they read as one load measured back to back: sequence
// numbers and times after the segment before, names resolved by each
// segment's own table, each row with its slice.
func TestSegmentsReadAsOneLoad(t *testing.T) {
	path := filepath.Join(t.TempDir(), "records.parquet")
	w, err := Create(path, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	const perSlice = 5
	var seq, at int64
	for slice := int32(1); slice <= 3; slice++ {
		// A fresh table per engine, whose first name differs from slice to
		// slice: "app" gets index 0 in the second.
		names := &metrics.Names{}
		if slice == 2 {
			names.Index([]byte("app"))
		}
		w.Begin(Segment{Slice: slice, Names: names, Targets: []string{fmt.Sprintf("GET /%d", slice)}, Seq: seq, Time: at})
		batch := make([]metrics.Record, perSlice)
		for i := range batch {
			batch[i] = request(i, names)
		}
		if err := w.Write(batch); err != nil {
			t.Fatal(err)
		}
		seq += perSlice
		at += perSlice * 1_000_000
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	rows, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 3*perSlice {
		t.Fatalf("%d rows", len(rows))
	}
	for i, row := range rows {
		slice := int32(i/perSlice + 1)
		if row.Seq != int64(i) || row.Slice != slice || row.Intended != int64(i)*1_000_000 || row.Target != fmt.Sprintf("GET /%d", slice) {
			t.Errorf("row %d: seq %d, slice %d, intended %d, target %s", i, row.Seq, row.Slice, row.Intended, row.Target)
		}
		if want := []Timing{{"db", float64(i%perSlice) / 100}, {"app", 0.5}}; !slices.Equal(row.ServerTiming, want) {
			t.Errorf("row %d: Server-Timing %v, want %v", i, row.ServerTiming, want)
		}
	}
}

// A file written before rows had a slice reads with slice 0.
func TestFilesWithoutSlicesRead(t *testing.T) {
	type oldRow struct {
		Seq      int64 `parquet:"seq"`
		Intended int64 `parquet:"intended,timestamp(nanosecond)"`
	}
	path := filepath.Join(t.TempDir(), "records.parquet")
	if err := parquet.WriteFile(path, []oldRow{{Seq: 0, Intended: 5}, {Seq: 1, Intended: 7}}); err != nil {
		t.Fatal(err)
	}
	rows, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 || rows[1].Seq != 1 || rows[1].Intended != 7 || rows[1].Slice != 0 {
		t.Fatalf("read %+v", rows)
	}
}
