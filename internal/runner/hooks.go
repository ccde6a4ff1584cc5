package runner

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/msbench/msbench/internal/results"
	"github.com/msbench/msbench/internal/study"
)

// sendHooks sends each hook to every instance of its service and returns
// the answers by hook name.
func sendHooks(ctx context.Context, hooks []*study.Target, dep *Deployment, loadService string) (results.Collected, error) {
	out := results.Collected{}
	for _, h := range hooks {
		service := h.Service
		if service == "" {
			service = loadService
		}
		for _, in := range dep.instancesOf(service) {
			t, err := loadTarget(h, "http://"+in.addr, dep.values)
			if err != nil {
				return nil, fmt.Errorf("hook %s: %w", h.Name, err)
			}
			body, err := send(ctx, dep.client(), t, nil)
			if err != nil {
				return nil, fmt.Errorf("hook %s on %s: %w", h.Name, in.name, err)
			}
			if !json.Valid(body) {
				body, _ = json.Marshal(string(body))
			}
			out[h.Name] = append(out[h.Name], results.InstanceAnswer{Instance: in.name, Body: body})
		}
	}
	return out, nil
}
