package dataset

import (
	"encoding/json"
	"reflect"
	"slices"
	"testing"
)

func TestGenerateHasTheSharedShape(t *testing.T) {
	all := Generate()
	if len(all) != Records {
		t.Fatalf("%d records, want %d", len(all), Records)
	}
	countries := map[string]bool{}
	for _, u := range all {
		countries[u.Country] = true
		if u.Name == "" || len(u.Domains) == 0 || len(u.WebPages) == 0 || len(u.AlphaTwoCode) != 2 {
			t.Fatalf("incomplete record %+v", u)
		}
	}
	if len(countries) != Countries {
		t.Errorf("%d countries, want %d", len(countries), Countries)
	}
	fi := Country(all, "Finland")
	if len(fi) != Finnish || !slices.ContainsFunc(fi, func(u University) bool { return u.Name == "University of Helsinki" }) {
		t.Errorf("Finland: %d records, want %d with the University of Helsinki", len(fi), Finnish)
	}
	// The shared file's field names, null where a record has no state.
	raw, err := json.Marshal(all[0])
	if err != nil {
		t.Fatal(err)
	}
	var fields map[string]any
	if err := json.Unmarshal(raw, &fields); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"web_pages", "name", "alpha_two_code", "state-province", "domains", "country"} {
		if _, ok := fields[f]; !ok {
			t.Errorf("no field %s in %s", f, raw)
		}
	}
	if !reflect.DeepEqual(all, Generate()) {
		t.Error("two calls made different data")
	}
}
