package kube

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Labels are the labels of a run's object that a Service selects by key:
// msbench's mark, and key set to value.
func Labels(key, value string) map[string]string {
	return map[string]string{LabelManagedBy: managedBy, key: value}
}

// Service is a ClusterIP Service named name, labelled labels, in front of
// the pods whose label selector has the value labels give it: the address
// a run's instance, dependency or link is reached at whichever pod serves
// it now.
func Service(name string, labels map[string]string, selector string, ports ...corev1.ServicePort) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		Spec: corev1.ServiceSpec{
			Type:     corev1.ServiceTypeClusterIP,
			Selector: map[string]string{selector: labels[selector]},
			Ports:    ports,
		},
	}
}
