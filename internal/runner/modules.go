package runner

import (
	"context"
	"errors"
)

// module is one lab feature of a deployment: hosts, dependencies, the
// forwards to them, the services' addresses, links, services, the
// resource sampler. start adds the placeholders it provides to values,
// which hold those of every module started before it; stop gives back
// what start took, including after a start that failed half-way.
type module interface {
	start(ctx context.Context, values map[string]string) error
	stop() error
}

// modules starts a deployment's modules in dependency order and stops them
// in reverse, so that no feature writes its own place in the teardown: a
// new one is one more module in the list deploy starts.
type modules struct{ started []module }

// start starts each module in turn until one fails. A module that fails
// has perhaps begun (two of three replicas up), so it is stopped with the
// others.
func (ms *modules) start(ctx context.Context, values map[string]string, all ...module) error {
	for _, m := range all {
		ms.started = append(ms.started, m)
		if err := m.start(ctx, values); err != nil {
			return err
		}
	}
	return nil
}

// stop stops every module started, the last first, whatever each returns;
// a second stop does nothing.
func (ms *modules) stop() error {
	var errs []error
	for i := len(ms.started) - 1; i >= 0; i-- {
		errs = append(errs, ms.started[i].stop())
	}
	ms.started = nil
	return errors.Join(errs...)
}

// feature is a module made of two methods of the deployment, which holds
// what the features share: the instances that events, hooks and the
// accounting reach whatever started them.
type feature struct {
	up   func(ctx context.Context, values map[string]string) error
	down func() error
}

func (f feature) start(ctx context.Context, values map[string]string) error { return f.up(ctx, values) }
func (f feature) stop() error                                               { return f.down() }
