// Package records writes every request of a load to a Parquet file that
// pandas, Polars and DuckDB read as they are, and reads it back.
//
// # One schema, one reader
//
// Row is the file's schema and is declared here alone; whoever reads the
// file reads it through this package. Read decodes whole rows, through
// parquet-go's row reader. A reader that needs a few columns of a whole
// run gets a projection declared beside Row (Outcome, with the Row columns
// it is read from), read column by column: the other columns' pages,
// Server-Timing lists above all, are never read, and no row is assembled.
// parquet-go's row reader would read a projection too (a struct of fewer
// columns), but it assembles every row and converts it to the smaller
// schema value by value: 0.7-0.8 s for a million rows on a busy 2-core
// VM, against 0.11 s column by column (BenchmarkRead; every column of
// Row takes 1-1.7 s). The test that every projected column is one of
// Row's, of the same kind, catches a rename on one side only.
package records

import (
	"errors"
	"fmt"
	"io"
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
	// Slice numbers the part of the load the request was sent in, from 1,
	// when a step was measured in slices taking turns with other
	// variants; 0 when it was measured in one piece. Files written before
	// it existed read as 0.
	Slice int32 `parquet:"slice"`
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
	at      Segment
	rows    []Row
	timings []Timing
}

// Segment is one part of a load written into a file that holds several:
// an interleaved step's slice. Each part comes from an engine of its own,
// with its own Server-Timing names and its own clock and numbering, and is
// placed after the parts before it: its sequence numbers after theirs,
// its times after the time they measured, so that the file reads as one
// load whose parts were measured back to back.
type Segment struct {
	Slice   int32
	Names   *metrics.Names
	Targets []string
	Seq     int64 // added to each record's sequence number
	Time    int64 // ns added to each record's times
}

// Begin makes the records written next those of segment s.
func (w *Writer) Begin(s Segment) {
	w.names, w.targets, w.at = s.Names, s.Targets, s
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
			Seq:       int64(r.Seq) + w.at.Seq,
			Slice:     w.at.Slice,
			Target:    target,
			Worker:    int32(r.Worker),
			Intended:  r.Intended + w.at.Time,
			Sent:      r.Sent + w.at.Time,
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

// Abort drops the file: it never appears under its final name.
func (w *Writer) Abort() {
	w.f.Close()
	os.Remove(w.path + ".partial") // what cannot be removed is never read: only the final name is
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

// Outcome is the part of a Row that says when a request was meant to
// leave, how long it took and whether it failed: what a comparison of
// runs reads.
type Outcome struct {
	Seq       int64
	Intended  int64 // ns
	LatencyMs float64
	Error     string // "" for a success
}

// outcomeColumns are the columns of Row an Outcome is read from, and how
// a value of each is stored in it.
var outcomeColumns = []struct {
	name string
	kind parquet.Kind
	set  func(o *Outcome, v parquet.Value, errs interned)
}{
	{"seq", parquet.Int64, func(o *Outcome, v parquet.Value, _ interned) { o.Seq = v.Int64() }},
	{"intended", parquet.Int64, func(o *Outcome, v parquet.Value, _ interned) { o.Intended = v.Int64() }},
	{"latency_ms", parquet.Double, func(o *Outcome, v parquet.Value, _ interned) { o.LatencyMs = v.Double() }},
	{"error", parquet.ByteArray, func(o *Outcome, v parquet.Value, errs interned) { o.Error = errs.of(v.ByteArray()) }},
}

// interned keeps one copy of each error text: a run has a handful, and a
// failing one has them on most of its rows.
type interned map[string]string

func (m interned) of(b []byte) string {
	if s, ok := m[string(b)]; ok {
		return s
	}
	s := string(b)
	m[s] = s
	return s
}

// Read loads every column of a records file; for tests and analyses of a
// few columns' worth of rows (it decodes every Server-Timing list).
func Read(path string) (rows []Row, err error) {
	err = withFile(path, func(pf *parquet.File) (err error) {
		defer func() {
			if p := recover(); p != nil { // the reader panics on a schema it cannot convert
				err = fmt.Errorf("%v", p)
			}
		}()
		r := parquet.NewGenericReader[Row](pf)
		defer r.Close()
		rows = make([]Row, pf.NumRows())
		n := 0
		for n < len(rows) {
			// Decoded straight into rows, so no list is copied, in batches,
			// which bound the row buffer parquet-go keeps.
			k, err := r.Read(rows[n:min(n+readBatch, len(rows))])
			n += k
			if err != nil && !errors.Is(err, io.EOF) {
				return err
			}
			if err != nil || k == 0 { // a footer that promised more rows than the pages hold
				break
			}
		}
		rows = rows[:n]
		return nil
	})
	return rows, err
}

// readBatch bounds the rows Read asks parquet-go for at once.
const readBatch = 8192

// ReadOutcomes loads the columns of Outcome alone, column by column, page
// by page: the other columns' pages are never read, and no row is
// assembled value by value as Read assembles them.
func ReadOutcomes(path string) (outs []Outcome, err error) {
	err = withFile(path, func(pf *parquet.File) error {
		outs = make([]Outcome, pf.NumRows())
		errs := interned{}
		for _, col := range outcomeColumns {
			leaf, ok := pf.Schema().Lookup(col.name)
			if !ok || leaf.Node.Type().Kind() != col.kind || leaf.MaxRepetitionLevel > 0 || leaf.MaxDefinitionLevel > 0 {
				return fmt.Errorf("no column %s of %s values", col.name, col.kind)
			}
			n, err := eachValue(pf, leaf.ColumnIndex, func(i int, v parquet.Value) { col.set(&outs[i], v, errs) })
			if err != nil {
				return fmt.Errorf("column %s: %w", col.name, err)
			}
			if n != len(outs) {
				return fmt.Errorf("column %s holds %d values for %d rows", col.name, n, len(outs))
			}
		}
		return nil
	})
	return outs, err
}

// eachValue calls set with every value of a column that is neither
// repeated nor optional, numbered from the file's first row, and returns
// how many there were (set is never called past the file's row count).
func eachValue(pf *parquet.File, column int, set func(i int, v parquet.Value)) (int, error) {
	buf := make([]parquet.Value, readBatch)
	n, rows := 0, int(pf.NumRows())
	for _, rg := range pf.RowGroups() {
		pages := rg.ColumnChunks()[column].Pages()
		for {
			page, err := pages.ReadPage()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				pages.Close()
				return n, err
			}
			err = readPage(page, buf, func(v parquet.Value) {
				if n < rows {
					set(n, v)
				}
				n++
			})
			parquet.Release(page)
			if err != nil {
				pages.Close()
				return n, err
			}
		}
		if err := pages.Close(); err != nil {
			return n, err
		}
	}
	return n, nil
}

// readPage gives each value of a page to each, in order.
func readPage(page parquet.Page, buf []parquet.Value, each func(parquet.Value)) error {
	values := page.Values()
	for {
		k, err := values.ReadValues(buf)
		for _, v := range buf[:k] {
			each(v)
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// withFile opens a records file for read, the errors it and read return
// naming it.
func withFile(path string, read func(*parquet.File) error) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("read records: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return fmt.Errorf("read records %s: %w", path, err)
	}
	pf, err := parquet.OpenFile(f, st.Size())
	if err != nil {
		return fmt.Errorf("read records %s: %w", path, err)
	}
	if err := read(pf); err != nil {
		return fmt.Errorf("read records %s: %w", path, err)
	}
	return nil
}

// Count returns how many rows a records file holds, from its footer alone:
// a cheap check that the file is whole and matches its summary.
func Count(path string) (n int64, err error) {
	err = withFile(path, func(pf *parquet.File) error {
		n = pf.NumRows()
		return nil
	})
	return n, err
}
