package kube

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/msbench/msbench/internal/results"
)

// Cluster is what a report records of the cluster a run ran on: its
// version and nodes (the run adds its namespace, generators and images).
type Cluster = results.Cluster

// Node is one node as its kubelet reports it.
type Node = results.ClusterNode

// Describe reads the cluster's version and nodes from the API.
func Describe(ctx context.Context, cs kubernetes.Interface) (Cluster, error) {
	var c Cluster
	v, err := cs.Discovery().ServerVersion()
	if err != nil {
		return c, fmt.Errorf("cluster version: %w", err)
	}
	c.ServerVersion, c.Platform = v.GitVersion, v.Platform
	nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return c, fmt.Errorf("cluster nodes: %w", err)
	}
	for _, n := range nodes.Items {
		c.Nodes = append(c.Nodes, describeNode(n))
	}
	return c, nil
}

func describeNode(n corev1.Node) Node {
	info := n.Status.NodeInfo
	return Node{
		Name:                   n.Name,
		CPUs:                   cores(n.Status.Capacity),
		AllocatableCPUs:        cores(n.Status.Allocatable),
		MemoryBytes:            n.Status.Capacity.Memory().Value(),
		AllocatableMemoryBytes: n.Status.Allocatable.Memory().Value(),
		ContainerRuntime:       info.ContainerRuntimeVersion,
		Kubelet:                info.KubeletVersion,
		OSImage:                info.OSImage,
		Kernel:                 info.KernelVersion,
		Architecture:           info.Architecture,
		InstanceType:           n.Labels[corev1.LabelInstanceTypeStable],
		Zone:                   n.Labels[corev1.LabelTopologyZone],
	}
}

func cores(r corev1.ResourceList) float64 { return float64(r.Cpu().MilliValue()) / 1000 }
