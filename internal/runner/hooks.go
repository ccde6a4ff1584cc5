package runner

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"

	"github.com/msbench/msbench/internal/results"
	"github.com/msbench/msbench/internal/study"
)

// Collected is collected.json of a step: each collect request's JSON
// answer from every instance of its service.
type Collected map[string][]InstanceAnswer

// InstanceAnswer is one instance's answer to a hook.
type InstanceAnswer struct {
	Instance string          `json:"instance"`
	Body     json.RawMessage `json:"body"`
}

// sendHooks sends each hook to every instance of its service and returns
// the answers by hook name.
func sendHooks(ctx context.Context, hooks []*study.Target, dep *deployment, loadService string) (Collected, error) {
	out := Collected{}
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
			body, err := send(ctx, t, nil)
			if err != nil {
				return nil, fmt.Errorf("hook %s on %s: %w", h.Name, in.name, err)
			}
			if !json.Valid(body) {
				body, _ = json.Marshal(string(body))
			}
			out[h.Name] = append(out[h.Name], InstanceAnswer{Instance: in.name, Body: body})
		}
	}
	return out, nil
}

func saveCollected(dir string, c Collected) error {
	return results.WriteJSON(filepath.Join(dir, "collected.json"), c)
}
