// Package proc starts and supervises the child processes of a benchmark run
// (services, their dependencies, load generators) so that none of them can
// outlive msbench.
//
// Every child gets its own process group, so signals reach the whole tree a
// service forks (shell wrappers, worker processes), and Pdeathsig=SIGKILL, so
// the kernel kills the direct child if msbench dies without running its
// cleanup. Pdeathsig only covers the direct child: grandchildren are reached
// through the process group by Stop/Kill, not by the kernel on a crash.
//
// Shutting down on SIGINT/SIGTERM needs no helper from this package: derive
// the run context with signal.NotifyContext and call Group.StopAll when it is
// done; StopAll deliberately ignores the cancellation of its context.
package proc
