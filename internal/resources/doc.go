// Package resources measures and caps the CPU and memory of each service of
// a benchmark run.
//
// Three methods exist, chosen by New in this order:
//
//   - "cgroup-v2": the unified hierarchy offers the cpu and memory
//     controllers (pure v2 machines);
//   - "cgroup-v1": cpu, cpuacct and memory are mounted as v1 hierarchies
//     (hybrid machines, where the v2 mount has no controllers);
//   - "proc": neither is usable (not root, read-only cgroupfs). CPU and
//     memory are summed over the process tree from /proc; limits cannot be
//     enforced and Track refuses them.
//
// Cgroups are created as msbench-<runID>/<service> below each controller's
// root. Track moves an already started process (and its current
// descendants) into its cgroup; later forks inherit it. Call Track right
// after proc.Start: anything forked between start and Track that is not yet
// visible in /proc stays outside, and memory charged before the move stays
// with the old cgroup (the kernel does not move charges).
//
// CPU and memory usage count from Track on. Peak memory can be reset per
// load step with ResetPeak; where the kernel offers no resettable peak, the
// peak is the maximum of the values sampled by Usage calls, so run a Sampler.
package resources
