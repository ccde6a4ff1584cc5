package study

import (
	"path/filepath"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/msbench/msbench/internal/placeholder"
)

// Dataset is an input file a study's services read: the shared data
// directory's file when it is there, a stand-in made by one of the study's
// builds otherwise. The run records which it used.
type Dataset struct {
	Name string
	// File is the file's path in the shared data directory ({data}).
	File string
	// Otherwise is where the stand-in is, with {root}, {data} and
	// {build.NAME} placeholders: it is resolved after the builds.
	Otherwise string
}

// datasets reads the datasets: field:
//
//	datasets:
//	  universities:
//	    file: universities.json
//	    otherwise: "{build.dataset}/universities.json"
//
// {dataset.universities} is the path the services are given.
func (d *decoder) datasets(n *yaml.Node) []Dataset {
	var out []Dataset
	for _, e := range d.mapping(n, "datasets") {
		f := join("datasets", e.key)
		if !elementName.MatchString(e.key) {
			d.errorf(e.keyN, f, "a dataset's name is lower-case letters, digits and dashes, starting with a letter")
		}
		ds := Dataset{Name: e.key}
		for _, de := range d.mapping(e.value, f, "file", "otherwise") {
			df := join(f, de.key)
			switch de.key {
			case "file":
				ds.File = d.nonEmpty(de.value, df)
				if filepath.IsAbs(ds.File) || !filepath.IsLocal(ds.File) {
					d.errorf(de.value, df, "a path inside the shared data directory, without ..")
				}
			case "otherwise":
				ds.Otherwise = d.nonEmpty(de.value, df)
				for _, m := range placeholder.Pattern.FindAllStringSubmatch(ds.Otherwise, -1) {
					if m[1] != "root" && m[1] != "data" && !strings.HasPrefix(m[1], "build.") {
						d.errorf(de.value, df, "{%s}: a stand-in is found before anything starts: only {root}, {data} and {build.NAME} are known then", m[1])
					}
				}
				d.placeholders(de.value, df, ds.Otherwise)
			}
		}
		if ds.File == "" || ds.Otherwise == "" {
			d.errorf(e.value, f, "a dataset needs file (in the shared data directory) and otherwise (the stand-in made when it is absent)")
		}
		out = append(out, ds)
	}
	return out
}

// Dataset returns the dataset of that name, or nil.
func (s *Study) Dataset(name string) *Dataset {
	for i := range s.Datasets {
		if s.Datasets[i].Name == name {
			return &s.Datasets[i]
		}
	}
	return nil
}
