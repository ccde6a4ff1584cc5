package analysis

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/msbench/msbench/internal/claims"
	"github.com/msbench/msbench/internal/study"
)

// SkippedSteps lists the steps matching where that the study file as
// the run kept it has and the run's profile left out, as "STEP (every
// variant)": what a section names beside Unmeasured's gaps. A dataset
// made in memory has no file and lists nothing; an error says the file
// could not be read again.
func (ds *Dataset) SkippedSteps(where map[string]string) ([]string, error) {
	written, err := ds.writtenStudy()
	if written == nil {
		return nil, err
	}
	var out []string
	for _, st := range written.Load.Steps {
		if st.Matches(where) && !slices.ContainsFunc(ds.Study.Load.Steps, func(s *study.Step) bool { return s.Name == st.Name }) {
			out = append(out, st.Name+" (every variant)")
		}
	}
	return out, nil
}

// SkippedVariants lists, as "KEY (every step)", the variants of the
// study file as written that the run's profile left out.
func (ds *Dataset) SkippedVariants() ([]string, error) {
	written, err := ds.writtenStudy()
	if written == nil {
		return nil, err
	}
	var out []string
	for _, v := range written.Matrix() {
		if !slices.ContainsFunc(ds.Variants, func(w study.Variant) bool { return w.Key() == v.Key() }) {
			out = append(out, v.Key()+" (every step)")
		}
	}
	return out, nil
}

// writtenStudy is the run's study file without its profile, read once;
// nil for a dataset made in memory.
func (ds *Dataset) writtenStudy() (*study.Study, error) {
	if ds.Dir != "" && ds.written == nil && ds.writtenErr == nil {
		path := filepath.Join(ds.Dir, study.FileName)
		data, err := os.ReadFile(path)
		if err == nil {
			ds.written, err = study.Parse(path, data, "")
		}
		if err != nil {
			ds.writtenErr = fmt.Errorf("the run's study file: %w", err)
		}
	}
	return ds.written, ds.writtenErr
}

// PaperFigure is a published figure of the run's claims file by id; the
// zero figure when the run kept no claims.
func (ds *Dataset) PaperFigure(id string) claims.Figure {
	if ds.Claims == nil {
		return claims.Figure{}
	}
	return ds.Claims.Figures[id]
}

// PaperPoint is one point of a published figure, NaN when not published.
func (ds *Dataset) PaperPoint(id, key string) float64 {
	if v, ok := ds.PaperFigure(id).Points[key]; ok {
		return v
	}
	return NaN
}

// PaperValue is a published figure's single value, NaN when not published.
func (ds *Dataset) PaperValue(id string) float64 {
	if v := ds.PaperFigure(id).Value; v != nil {
		return *v
	}
	return NaN
}
