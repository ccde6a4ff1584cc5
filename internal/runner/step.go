package runner

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/msbench/msbench/internal/load"
	"github.com/msbench/msbench/internal/loadspec"
	"github.com/msbench/msbench/internal/metrics"
	"github.com/msbench/msbench/internal/placeholder"
	"github.com/msbench/msbench/internal/study"
)

// loadTargets turns a step's targets into requests at baseURL, filling in
// placeholders from values (variant, builds, setup captures).
func loadTargets(targets []*study.Target, baseURL string, values map[string]string) ([]load.Target, error) {
	var out []load.Target
	for _, t := range targets {
		lt, err := loadTarget(t, baseURL, values)
		if err != nil {
			return nil, fmt.Errorf("target %s: %w", t.Name, err)
		}
		out = append(out, lt)
	}
	return out, nil
}

func loadTarget(t *study.Target, baseURL string, values map[string]string) (load.Target, error) {
	// The first failed expansion is kept and returned at the end.
	var err error
	expand := func(s string) string {
		if err == nil {
			s, err = placeholder.Expand(s, values)
		}
		return s
	}
	status, serr := load.ParseStatusSet(t.ExpectStatus)
	if serr != nil {
		return load.Target{}, serr
	}
	lt := load.Target{
		Name:         t.Name,
		Method:       t.Method,
		URL:          baseURL + expand(t.Path),
		Weight:       t.Weight,
		ExpectStatus: status,
		ExpectBody:   []byte(t.ExpectBody),
	}
	for _, h := range t.Header {
		lt.Header = append(lt.Header, [2]string{h[0], expand(h[1])})
	}
	if t.Body != "" {
		lt.Body = []byte(expand(t.Body))
	}
	if len(t.Form) > 0 {
		var fields []loadspec.FormField
		for _, kv := range t.Form {
			v := expand(kv[1])
			f := loadspec.FormField{Name: kv[0], Value: v}
			if file, ok := strings.CutPrefix(v, "@"); ok {
				if !filepath.IsAbs(file) {
					file = filepath.Join(values["root"], file)
				}
				f = loadspec.FormField{Name: kv[0], File: file}
			}
			fields = append(fields, f)
		}
		if err != nil {
			return load.Target{}, err
		}
		body, contentType, ferr := loadspec.MultipartBody(fields)
		if ferr != nil {
			return load.Target{}, ferr
		}
		lt.Body = body
		lt.Header = append(lt.Header, [2]string{"Content-Type", contentType})
	}
	return lt, err
}

func warnings(s metrics.Summary) string {
	if len(s.Warnings) == 0 {
		return ""
	}
	return " — " + strings.Join(s.Warnings, "; ")
}
