package study

// Dataset is an input file a study's services read: the shared data
// directory's file when it is there, a stand-in made by one of the study's
// builds otherwise. The run records which it used. A study file gives its
// datasets as
//
//	datasets:
//	  universities:
//	    file: universities.json
//	    otherwise: "{build.dataset}/universities.json"
//
// {dataset.universities} is the path the services are given.
type Dataset struct {
	Name string `json:"Name"`
	// File is the file's path in the shared data directory ({data}).
	File string `json:"File"`
	// Otherwise is where the stand-in is, with {root}, {data} and
	// {build.NAME} placeholders: it is resolved after the builds.
	Otherwise string `json:"Otherwise"`
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
