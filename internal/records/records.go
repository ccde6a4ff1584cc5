// Package records writes every request of a load to a Parquet file that
// pandas, Polars and DuckDB read as they are.
package records

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress/zstd"

	"github.com/msbench/msbench/internal/metrics"
)

// Row is the file's schema: one row per request.
type Row struct {
	Seq          int64    `parquet:"seq"`
	Target       string   `parquet:"target,dict"`
	Worker       int32    `parquet:"worker"`
	Intended     int64    `parquet:"intended,timestamp(nanosecond)"`
	Sent         int64    `parquet:"sent,timestamp(nanosecond)"`
	LatencyMs    float64  `parquet:"latency_ms"`
	ServiceMs    float64  `parquet:"service_ms"`
	Status       int32    `parquet:"status"`
	BytesIn      int64    `parquet:"bytes_in"`
	BytesOut     int64    `parquet:"bytes_out"`
	Error        string   `parquet:"error,dict"`
	Tag          int64    `parquet:"tag"`
	ServerTiming []Timing `parquet:"server_timing,list"`
}

// Timing is one Server-Timing metric of a row.
type Timing struct {
	Name string  `parquet:"name,dict"`
	Ms   float64 `parquet:"ms"`
}

// rowsPerGroup bounds what the writer buffers before flushing, which is what
// keeps memory flat on runs of millions of requests.
const rowsPerGroup = 128 * 1024

// Writer appends records to a file that appears under its final name only
// once it is complete, so a reader never sees a truncated file.
type Writer struct {
	path    string
	f       *os.File
	w       *parquet.GenericWriter[Row]
	names   *metrics.Names
	targets []string
	rows    []Row
	timings []Timing
}

// Create starts a Parquet file at path. names resolves Server-Timing indices; targets names target indices.
func Create(path string, names *metrics.Names, targets []string) (*Writer, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("create records %s: %w", path, err)
	}
	f, err := os.Create(path + ".partial")
	if err != nil {
		return nil, fmt.Errorf("create records %s: %w", path, err)
	}
	w := parquet.NewGenericWriter[Row](f,
		parquet.Compression(&zstd.Codec{Level: zstd.SpeedFastest}),
		parquet.MaxRowsPerRowGroup(rowsPerGroup),
	)
	return &Writer{path: path, f: f, w: w, names: names, targets: targets}, nil
}

// Write appends a batch. The row buffers are reused from batch to batch.
func (w *Writer) Write(batch []metrics.Record) error {
	w.rows = w.rows[:0]
	w.timings = w.timings[:0]
	for i := range batch {
		r := &batch[i]
		first := len(w.timings)
		for _, t := range r.Timings[:r.NTimings] {
			w.timings = append(w.timings, Timing{Name: w.names.Name(t.Metric), Ms: t.Ms})
		}
		target := ""
		if int(r.Target) < len(w.targets) {
			target = w.targets[r.Target]
		}
		w.rows = append(w.rows, Row{
			Seq:       int64(r.Seq),
			Target:    target,
			Worker:    int32(r.Worker),
			Intended:  r.Intended,
			Sent:      r.Sent,
			LatencyMs: float64(r.Latency()) / 1e6,
			ServiceMs: float64(r.ServiceTime()) / 1e6,
			Status:    int32(r.Status),
			BytesIn:   r.BytesIn,
			BytesOut:  r.BytesOut,
			Error:     r.Err.String(),
			Tag:       int64(r.Tag),
		})
		// Sliced after the appends above so a grown backing array is seen.
		w.rows[len(w.rows)-1].ServerTiming = w.timings[first:len(w.timings):len(w.timings)]
	}
	if _, err := w.w.Write(w.rows); err != nil {
		return fmt.Errorf("write records %s: %w", w.path, err)
	}
	return nil
}

// Close finishes the file and gives it its final name.
func (w *Writer) Close() error {
	if err := w.w.Close(); err != nil {
		w.f.Close()
		return fmt.Errorf("finish records %s: %w", w.path, err)
	}
	if err := w.f.Sync(); err != nil {
		w.f.Close()
		return fmt.Errorf("sync records %s: %w", w.path, err)
	}
	if err := w.f.Close(); err != nil {
		return fmt.Errorf("close records %s: %w", w.path, err)
	}
	if err := os.Rename(w.path+".partial", w.path); err != nil {
		return fmt.Errorf("finish records %s: %w", w.path, err)
	}
	return nil
}

// Read loads a whole records file; for tests and small files.
func Read(path string) ([]Row, error) {
	rows, err := parquet.ReadFile[Row](path)
	if err != nil {
		return nil, fmt.Errorf("read records %s: %w", path, err)
	}
	return rows, nil
}

// Count returns how many rows a records file holds, from its footer alone:
// a cheap check that the file is whole and matches its summary.
func Count(path string) (int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, fmt.Errorf("records %s: %w", path, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return 0, fmt.Errorf("records %s: %w", path, err)
	}
	pf, err := parquet.OpenFile(f, st.Size())
	if err != nil {
		return 0, fmt.Errorf("records %s: %w", path, err)
	}
	return pf.NumRows(), nil
}
