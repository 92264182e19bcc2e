// Command labservices runs the real-Liqo lab's cluster services for one
// cluster (test/liqo/labservices): LoadBalancer addresses on the lab's
// underlay and the cluster DNS. test/liqo/lab.sh starts one per cluster in
// the cluster's node network namespace.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net/netip"
	"os"
	"os/signal"
	"sync"
	"syscall"

	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/liqo-relay/relay/test/liqo/labservices"
)

func main() {
	log := slog.New(slog.NewTextHandler(os.Stderr, nil))
	if err := run(log); err != nil {
		log.Error("labservices failed", "err", err)
		os.Exit(1)
	}
}

func run(log *slog.Logger) error {
	kubeconfig := flag.String("kubeconfig", "", "the cluster's kubeconfig")
	pool := flag.String("lb-pool", "", "LoadBalancer addresses, FIRST-LAST")
	routerNS := flag.String("router-netns", "", "network namespace of the underlay router, where each address gets a host route")
	nextHop := flag.String("next-hop", "", "the node address the routes point at")
	dnsAddr := flag.String("dns-listen", "0.0.0.0:53", "address the cluster DNS listens on")
	domain := flag.String("cluster-domain", "cluster.local", "the cluster domain")
	flag.Parse()
	if *kubeconfig == "" || *pool == "" || *routerNS == "" || *nextHop == "" {
		return errors.New("--kubeconfig, --lb-pool, --router-netns and --next-hop are required")
	}
	first, last, err := labservices.ParseRange(*pool)
	if err != nil {
		return fmt.Errorf("--lb-pool: %w", err)
	}
	hop, err := netip.ParseAddr(*nextHop)
	if err != nil {
		return fmt.Errorf("--next-hop: %w", err)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
	if err != nil {
		return fmt.Errorf("--kubeconfig: %w", err)
	}
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("client: %w", err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	f := informers.NewSharedInformerFactory(client, 0)
	lb := labservices.NewLoadBalancers(client, f, labservices.NewPool(first, last),
		labservices.NetnsRouter{Netns: *routerNS, NextHop: hop}, log)
	d := labservices.NewDNS(*domain, f, log)
	f.Start(ctx.Done())
	defer f.Shutdown()
	errs := make(chan error, 2)
	var wg sync.WaitGroup
	wg.Go(func() { errs <- lb.Run(ctx) })
	wg.Go(func() { errs <- d.Serve(ctx, *dnsAddr) })
	err = <-errs
	stop()
	wg.Wait()
	if ctx.Err() != nil && err == nil {
		return nil
	}
	return err
}
