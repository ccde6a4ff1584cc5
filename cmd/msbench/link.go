package main

import (
	"github.com/spf13/cobra"

	"github.com/msbench/msbench/internal/linkpod"
	"github.com/msbench/msbench/internal/links"
)

func newLinkCmd() *cobra.Command {
	var o linkpod.Options
	var latency, jitter, bandwidth string
	cmd := &cobra.Command{
		Use:   "link --listen IP:PORT --to IP:PORT --control IP:PORT [--latency D] [--jitter D] [--bandwidth B]",
		Short: "Run one emulated link in the foreground (what a link pod runs)",
		Long: `Run one emulated link of a study's links: (latency and jitter each way,
bandwidth each way, faults) between the clients that dial --listen and the
server at --to, until SIGTERM, SIGINT or SIGHUP (a pod's deletion); the exit
status is then 0. It is what a link pod runs on a cluster, where the link's
Service leads to --listen, the pod's IP.

--listen and --control must be an IP and a port of their own (no wildcard).
--to must be an IP:PORT on loopback or a private network (10/8, 172.16/12,
192.168/16, fc00::/7), where a cluster's pods and Services are: a link never
forwards off the cluster's network.

Once both are bound, one JSON line on standard output says so. On --control:
  POST /fault {"fault": "reset|timeout|slow_close|none", "delay": "1s"}
      sets the link's fault (delay: slow_close only), as a step's link event
  GET /stats
      {"accepted": N, "open": N, "fault": F}
A pod runs it so, MSBENCH_POD_IP set from status.podIP:

  exec msbench link --listen "$MSBENCH_POD_IP:7000" --to 10.252.0.12:8080 --latency 10ms --control "$MSBENCH_POD_IP:7001"

Exit status: 0 stopped, 1 failure, 2 bad usage.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var err error
			if latency != "" {
				if o.Spec.Latency, err = links.ParseDuration(latency); err != nil {
					return usagef("--latency: %v", err)
				}
			}
			if jitter != "" {
				if o.Spec.Jitter, err = links.ParseDuration(jitter); err != nil {
					return usagef("--jitter: %v", err)
				}
			}
			if bandwidth != "" {
				if o.Spec.Bandwidth, err = links.ParseBandwidth(bandwidth); err != nil {
					return usagef("--bandwidth: %v", err)
				}
			}
			if err := o.Check(); err != nil {
				return usageError{err}
			}
			return linkpod.Run(cmd.Context(), o, cmd.OutOrStdout())
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&o.Name, "name", "link", "the link's name, for messages")
	fl.StringVar(&o.Listen, "listen", "", "IP:PORT the link's clients dial (required)")
	fl.StringVar(&o.To, "to", "", "IP:PORT the link forwards to (required)")
	fl.StringVar(&o.Control, "control", "", "IP:PORT of the control endpoint (required)")
	fl.StringVar(&latency, "latency", "", "delay each way, e.g. 10ms")
	fl.StringVar(&jitter, "jitter", "", "spread of each delay, ± e.g. 1ms")
	fl.StringVar(&bandwidth, "bandwidth", "", "bits per second each way, e.g. 100Mbps")
	return cmd
}
