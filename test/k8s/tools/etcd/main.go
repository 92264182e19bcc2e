// Command etcd runs the etcd server of go.etcd.io/etcd/server/v3 for the
// test clusters of test/k8s/cluster.sh.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() { etcdmain.Main(os.Args) }
