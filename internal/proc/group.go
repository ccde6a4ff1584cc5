package proc

import (
	"context"
	"errors"
	"sync"
	"time"
)

// Group holds the processes of a run in start order so they can be stopped
// in reverse: clients before the services they call, services before their
// databases.
type Group struct {
	mu    sync.Mutex
	procs []*Process
}

// Add appends p; it will be stopped before everything added earlier.
func (g *Group) Add(p *Process) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.procs = append(g.procs, p)
}

// Start starts s and adds it to the group.
func (g *Group) Start(ctx context.Context, s Spec) (*Process, error) {
	p, err := Start(ctx, s)
	if err != nil {
		return nil, err
	}
	g.Add(p)
	return p, nil
}

// Processes returns the processes in start order.
func (g *Group) Processes() []*Process {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]*Process(nil), g.procs...)
}

// StopAll stops every process in reverse start order, each with grace, and
// returns the joined errors. It ignores the cancellation of ctx on purpose:
// it is the shutdown path, typically reached because the run context was
// cancelled by SIGINT, and services should still get their grace period.
// Each Stop is bounded (grace plus an internal SIGKILL wait), so StopAll
// always returns.
func (g *Group) StopAll(ctx context.Context, grace time.Duration) error {
	ctx = context.WithoutCancel(ctx)
	procs := g.Processes()
	var errs []error
	for i := len(procs) - 1; i >= 0; i-- {
		errs = append(errs, procs[i].Stop(ctx, grace))
	}
	return errors.Join(errs...)
}

// StopAllAtOnce stops every process concurrently, each with the same grace,
// so the whole group is gone within grace plus the SIGKILL wait. It is for
// an interrupted run, where stopping in order, each with its own grace,
// would keep a user who pressed Ctrl-C waiting for the sum of them.
func (g *Group) StopAllAtOnce(grace time.Duration) error {
	procs := g.Processes()
	errs := make([]error, len(procs))
	var wg sync.WaitGroup
	for i, p := range procs {
		wg.Go(func() { errs[i] = p.Stop(context.Background(), grace) })
	}
	wg.Wait()
	return errors.Join(errs...)
}
