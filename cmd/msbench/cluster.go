package main

import (
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/msbench/msbench/internal/cluster"
	"github.com/msbench/msbench/internal/kube"
)

func newClusterCmd() *cobra.Command {
	var stateDir string
	cmd := &cobra.Command{
		Use:   "cluster",
		Short: "Run a single-node Kubernetes on this machine, to try the cluster backend",
		Long: `A real Kubernetes ` + cluster.KubernetesVersion + ` on this machine: etcd, the API server,
controller manager, scheduler and kubelet (built once from the Go module
proxy and cached), containerd, runc and the CNI plugins from Debian, all in a
network namespace of their own, which no route leaves. The API is reached
through a forwarder on 127.0.0.1; the kubeconfig that up prints works with
kubectl and msbench's --kubeconfig. Needs root.`,
	}
	cmd.PersistentFlags().StringVar(&stateDir, "state-dir", cluster.DefaultStateDir(), "where the cluster keeps its certificates, data and logs")
	up := &cobra.Command{
		Use:   "up",
		Short: "Start the cluster and print its kubeconfig's path; it runs until cluster down",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			began := time.Now()
			c, err := cluster.Up(cmd.Context(), cluster.Options{StateDir: stateDir, Log: cmd.ErrOrStderr()})
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "node ready in %s; pods are reachable in network namespace %s; stop it with msbench cluster down\n",
				time.Since(began).Round(100*time.Millisecond), c.Netns())
			fmt.Fprintln(cmd.OutOrStdout(), c.Kubeconfig())
			return nil
		},
	}
	down := &cobra.Command{
		Use:   "down",
		Short: "Stop the cluster and leave the machine as cluster up found it",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			err := cluster.Down(cmd.Context(), stateDir)
			if errors.Is(err, cluster.ErrNoCluster) {
				fmt.Fprintf(cmd.OutOrStdout(), "no cluster in %s\n", stateDir)
				return nil
			}
			if err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), "cluster stopped and removed")
			return nil
		},
	}
	rights := &cobra.Command{
		Use:   "rights [NAME]",
		Short: "Print the ClusterRole msbench needs on a cluster (kubectl apply -f -), named NAME (default msbench)",
		Long: `Print the ClusterRole that holds every right msbench run --kubeconfig needs,
and no more, as JSON that kubectl apply takes (msbench cluster rights |
kubectl apply -f -). Bind it to the identity msbench runs as (kubectl create
clusterrolebinding msbench --clusterrole msbench --user YOU). The rules are cluster-wide because the
run's namespace does not exist before the run; msbench touches only the
namespace it creates.`,
		Example: "  msbench cluster rights\n  msbench cluster rights msbench-runner",
		Args:    cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			name := "msbench"
			if len(args) == 1 {
				name = args[0]
			}
			fmt.Fprint(cmd.OutOrStdout(), kube.ClusterRoleManifest(name))
			return nil
		},
	}
	cmd.AddCommand(up, down, rights)
	return cmd
}
