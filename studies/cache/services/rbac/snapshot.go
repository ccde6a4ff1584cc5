package main

import (
	"cmp"
	"slices"
)

// snapshot is everything the reads serve, as of one data version. It is
// the unit every strategy caches: the version travels with the roles, so a
// stale copy answers with an old X-Data-Version.
type snapshot struct {
	Version int64  `json:"version"`
	Roles   []role `json:"roles"` // sorted by id
}

type role struct {
	ID          int64        `json:"id"`
	Name        string       `json:"name"`
	Permissions []permission `json:"permissions"` // sorted by id
}

type permission struct {
	ID   int64  `json:"id"`
	Name string `json:"name"`
}

// role returns the role with id, if the snapshot has it.
func (s *snapshot) role(id int64) (role, bool) {
	i, ok := slices.BinarySearchFunc(s.Roles, id, func(r role, id int64) int { return cmp.Compare(r.ID, id) })
	if !ok {
		return role{}, false
	}
	return s.Roles[i], true
}
