//go:build tools

// Package tools pins the test-only binaries that test/k8s/cluster.sh builds:
// a real kube-apiserver and etcd, and kubectl and helm for tests. It is its
// own module so that none of this reaches the relay's go.mod.
package tools

import (
	_ "go.etcd.io/etcd/server/v3/etcdmain"
	_ "helm.sh/helm/v3/cmd/helm"
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kubectl"
)
