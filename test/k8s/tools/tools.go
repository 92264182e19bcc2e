//go:build tools

// Package tools pins the test-only binaries that test/k8s/cluster.sh builds:
// a real kube-apiserver and etcd, kubectl and helm for tests, and the
// kube-controller-manager, kube-scheduler and kube-proxy that the real-Liqo
// lab (test/liqo) runs beside them. It is its
// own module so that none of this reaches the relay's go.mod.
package tools

import (
	_ "go.etcd.io/etcd/server/v3/etcdmain"
	_ "helm.sh/helm/v3/cmd/helm"
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-proxy"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
	_ "k8s.io/kubernetes/cmd/kubectl"
)
