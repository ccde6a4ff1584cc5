package metrics

import (
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// Merge is the summary of one load measured in parts: the slices of an
// interleaved step, or the generators of a step spread over machines. The
// distributions come from the parts' HDR histograms merged, never from
// their percentiles (a percentile of percentiles is no percentile of the
// whole); counts add up; durations add up, so rates are over the time the
// parts measured, not the gaps between them; the whole is valid only when
// every part is. The parts must be of one model, and of this msbench: a
// part without its histograms cannot be merged and is an error.
func Merge(parts []Summary) (Summary, error) {
	if len(parts) == 0 {
		return Summary{}, errors.New("merge summaries: no part")
	}
	first := parts[0]
	s := Summary{
		Model:          first.Model,
		Clock:          first.Clock,
		StartedAt:      first.StartedAt,
		EndedAt:        first.EndedAt,
		Users:          first.Users,
		Connections:    first.Connections,
		TargetRPS:      first.TargetRPS,
		GeneratorCPUs:  first.GeneratorCPUs,
		Valid:          true,
		AchievedRateOK: true,
		SuccessRateOK:  true,
		Errors:         map[string]int64{},
		StatusCodes:    map[string]int64{},
		ServerTiming:   map[string]Distribution{},
		Histograms:     map[string]string{},
		Warnings:       []string{},
	}
	hists := map[string]*hdrhistogram.Histogram{}
	var sendS float64 // the open model's sending windows, as AchievedRPS divides by
	for i, p := range parts {
		if p.Model != s.Model {
			return Summary{}, fmt.Errorf("merge summaries: part %d is of the %s model, part 1 of the %s", i+1, p.Model, s.Model)
		}
		if p.Requests > 0 && p.Histograms[histLatency] == "" {
			return Summary{}, fmt.Errorf("merge summaries: part %d has no latency histogram", i+1)
		}
		if p.StartedAt.Before(s.StartedAt) {
			s.StartedAt = p.StartedAt
		}
		if p.EndedAt.After(s.EndedAt) {
			s.EndedAt = p.EndedAt
		}
		s.DurationS += p.DurationS
		s.Unstamped += p.Unstamped
		s.Scheduled += p.Scheduled
		s.Unsent += p.Unsent
		s.Requests += p.Requests
		s.Successes += p.Successes
		s.BytesIn += p.BytesIn
		s.BytesOut += p.BytesOut
		s.LateStarts += p.LateStarts
		s.ServerTimingMalformed += p.ServerTimingMalformed
		s.ServerTimingDropped += p.ServerTimingDropped
		s.GeneratorCPUS += p.GeneratorCPUS
		s.Valid = s.Valid && p.Valid
		s.AchievedRateOK = s.AchievedRateOK && p.AchievedRateOK
		s.SuccessRateOK = s.SuccessRateOK && p.SuccessRateOK
		addCounts(s.Errors, p.Errors)
		addCounts(s.StatusCodes, p.StatusCodes)
		if p.AchievedRPS > 0 {
			sendS += float64(p.Requests) / p.AchievedRPS
		}
		for _, w := range p.Warnings {
			if len(parts) > 1 {
				w = fmt.Sprintf("part %d of %d: %s", i+1, len(parts), w)
			}
			if !slices.Contains(s.Warnings, w) {
				s.Warnings = append(s.Warnings, w)
			}
		}
		for name, enc := range p.Histograms {
			h, err := DecodeHistogram(enc)
			if err != nil {
				return Summary{}, fmt.Errorf("merge summaries: part %d, %s: %w", i+1, name, err)
			}
			if into, ok := hists[name]; ok {
				into.Merge(h)
			} else {
				hists[name] = h
			}
		}
	}
	if s.Requests > 0 {
		s.SuccessRate = float64(s.Successes) / float64(s.Requests)
	}
	if s.DurationS > 0 {
		s.ThroughputRPS = float64(s.Requests) / s.DurationS
		s.GeneratorCPUUtil = s.GeneratorCPUS / s.DurationS
	}
	s.AchievedRPS = s.ThroughputRPS
	if s.Model == "open" && sendS > 0 {
		s.AchievedRPS = float64(s.Requests) / sendS
	}
	for _, name := range slices.Sorted(maps.Keys(hists)) {
		h := hists[name]
		s.Histograms[name] = encode(h)
		switch name {
		case histLatency:
			s.Latency = distribution(h)
		case histUncorrected:
			s.Uncorrected = distribution(h)
		case histScheduleLag:
			s.ScheduleLag = distribution(h)
		default:
			if metric, ok := cutServerTiming(name); ok {
				s.ServerTiming[metric] = distribution(h)
			}
		}
	}
	return s, nil
}

func addCounts(into, from map[string]int64) {
	for k, n := range from {
		into[k] += n
	}
}
