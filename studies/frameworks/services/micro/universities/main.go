// Command universities is the go-micro service that answers
// Universities.Find from the universities dataset.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"os"

	"go-micro.dev/v5"
	"go-micro.dev/v5/errors"

	"github.com/msbench/msbench/studies/frameworks/services/micro/api"
	"github.com/msbench/msbench/studies/frameworks/services/micro/platform"
)

func main() {
	handler, err := newUniversities(platform.Env("UNIVERSITIES_FILE"), os.Getenv("UNIVERSITIES_LOAD"))
	if err != nil {
		log.Fatal(err)
	}
	svc := micro.NewService(platform.ServiceOptions(api.UniversitiesService, "UNIVERSITIES_ADDR")...)
	svc.Init()
	if err := micro.RegisterHandler(svc.Server(), handler); err != nil {
		log.Fatal(err)
	}
	if err := svc.Run(); err != nil {
		log.Fatal(err)
	}
}

// Universities is the handler; go-micro exposes its methods as endpoints.
type Universities struct {
	path string
	// loaded is the dataset read at start; nil when it is read per request.
	loaded []api.University
}

// newUniversities reads the dataset at path once (mode "startup") or on
// every request (mode "per-request", the default: the thesis' Micro service
// re-read and re-parsed the file each time).
func newUniversities(path, mode string) (*Universities, error) {
	if mode != "" && mode != "startup" && mode != "per-request" {
		return nil, fmt.Errorf("UNIVERSITIES_LOAD=%q: want startup or per-request", mode)
	}
	u := &Universities{path: path}
	// The file is read in both modes, so that an unusable one stops the start.
	all, err := u.read()
	if err != nil {
		return nil, err
	}
	if mode == "startup" {
		u.loaded = all
	}
	return u, nil
}

func (u *Universities) read() ([]api.University, error) {
	data, err := os.ReadFile(u.path)
	if err != nil {
		return nil, err
	}
	all := []api.University{}
	if err := json.Unmarshal(data, &all); err != nil {
		return nil, fmt.Errorf("%s: %w", u.path, err)
	}
	return all, nil
}

// Find answers the universities of req.Country, exactly as spelled; none
// for an unknown country.
func (u *Universities) Find(_ context.Context, req *api.FindRequest, rsp *api.FindResponse) error {
	all := u.loaded
	if all == nil {
		var err error
		if all, err = u.read(); err != nil {
			return errors.InternalServerError(api.UniversitiesService, "read the dataset: %v", err)
		}
	}
	rsp.Universities = []api.University{}
	for _, un := range all {
		if un.Country == req.Country {
			rsp.Universities = append(rsp.Universities, un)
		}
	}
	return nil
}
