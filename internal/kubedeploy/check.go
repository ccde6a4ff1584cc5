package kubedeploy

import (
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"

	"github.com/msbench/msbench/internal/study"
)

// loopback matches a loopback address written out: 127.x.y.z, localhost,
// ::1 (not the tail of another IPv6 address such as fe80::1).
var loopback = regexp.MustCompile(`(?i)\b127\.\d{1,3}\.\d{1,3}\.\d{1,3}\b|\blocalhost\b|(^|[^0-9a-f:])::1($|[^0-9a-f:])`)

// Check refuses a study that cannot run on a cluster, before anything
// starts: a service whose command, environment or readiness check (or a
// variant's attribute, which these read) hard-codes a loopback address,
// which in a pod is the pod itself, not the service meant; and a service
// that runs as a system user (user:), which its image does not have. Each
// error names the service (or axis) and the field.
func Check(s *study.Study) error {
	var errs []error
	hardcoded := func(where, text string) {
		if m := loopback.FindString(text); m != "" {
			errs = append(errs, fmt.Errorf("%s hard-codes the loopback address %q (%q): on a cluster a service binds {addr} or {host} and dials {service.NAME.addr}", where, m, text))
		}
	}
	for _, svc := range s.Services {
		hardcoded("service "+svc.Name+": command", svc.Command)
		for _, kv := range svc.Env {
			hardcoded("service "+svc.Name+": env "+kv[0], kv[1])
		}
		hardcoded("service "+svc.Name+": ready http", svc.Ready.HTTP)
		hardcoded("service "+svc.Name+": ready tcp", svc.Ready.TCP)
		if svc.User != "" {
			errs = append(errs, userError(svc))
		}
	}
	for _, ax := range s.Variants {
		for _, value := range ax.Values {
			attrs := ax.Attrs[value]
			for _, attr := range slices.Sorted(maps.Keys(attrs)) {
				hardcoded("variant "+ax.Name+"="+value+": "+attr, attrs[attr])
			}
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("study %s cannot run on a cluster: %w", s.Name, errors.Join(errs...))
	}
	return nil
}
