package study

import (
	"maps"
	"slices"
)

// checkWhen verifies that a service's when: names axes and their values,
// leaves it in at least one variant, and is not on the service the load
// goes to, which every variant needs.
func (d *decoder) checkWhen(s *Study, svc *Service) {
	if svc.When == nil {
		return
	}
	f := join(join("services", svc.Name), "when")
	for _, axis := range slices.Sorted(maps.Keys(svc.When)) {
		i := slices.IndexFunc(s.Variants, func(a Axis) bool { return a.Name == axis })
		if i < 0 {
			d.errorf(nil, join(f, axis), "no such axis in variants")
			continue
		}
		declared := s.Variants[i].Values
		if s.Variants[i].declared != nil {
			declared = s.Variants[i].declared
		}
		for _, v := range svc.When[axis] {
			if !slices.Contains(declared, v) {
				d.errorf(nil, join(f, axis), "%q is not a value of axis %s", v, axis)
			}
		}
	}
	if s.Load.Service == svc.Name {
		d.errorf(nil, f, "the load goes to %s, so it runs in every variant", svc.Name)
	}
}
