package main

import (
	"reflect"
	"slices"
	"testing"
)

func TestSeedData(t *testing.T) {
	roles, perms := seedData()
	if len(roles) != 50 || len(perms) != 200 {
		t.Fatalf("%d roles and %d permissions, want 50 and 200", len(roles), len(perms))
	}
	names := map[string]bool{}
	for i, p := range perms {
		if p.ID != int64(i+1) || p.Name == "" || names[p.Name] {
			t.Fatalf("permission %d is %+v: want id %d and a new name", i, p, i+1)
		}
		names[p.Name] = true
	}
	grants := 0
	for i, r := range roles {
		if r.ID != int64(i+1) || r.Name == "" || names[r.Name] {
			t.Fatalf("role %d is %+v: want id %d and a new name", i, r, i+1)
		}
		names[r.Name] = true
		if n := len(r.Permissions); n < minGrants || n > maxGrants {
			t.Errorf("role %s holds %d permissions, want %d to %d", r.Name, n, minGrants, maxGrants)
		}
		if !slices.IsSortedFunc(r.Permissions, func(a, b permission) int { return int(a.ID - b.ID) }) {
			t.Errorf("role %s: permissions not sorted by id", r.Name)
		}
		for j, p := range r.Permissions {
			if p != perms[p.ID-1] || (j > 0 && p.ID == r.Permissions[j-1].ID) {
				t.Errorf("role %s holds %+v: unknown or twice", r.Name, p)
			}
		}
		grants += len(r.Permissions)
	}
	// README.md states the size; a Go release that changed math/rand/v2's
	// draws would change it, and the study's data with it.
	if grants != 1919 {
		t.Errorf("%d grants, want the 1919 the README states", grants)
	}
	if again, _ := seedData(); !reflect.DeepEqual(roles, again) {
		t.Error("two calls give different seeds; it must be deterministic")
	}
}
