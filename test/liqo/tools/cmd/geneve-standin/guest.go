package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/config"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	networkingv1beta1 "github.com/liqotech/liqo/apis/networking/v1beta1"
	"github.com/liqotech/liqo/pkg/gateway"
	gwfabric "github.com/liqotech/liqo/pkg/gateway/fabric"
	flagsutils "github.com/liqotech/liqo/pkg/utils/flags"
	"github.com/liqotech/liqo/pkg/utils/mapper"
	"github.com/liqotech/liqo/pkg/utils/restcfg"

	"github.com/liqo-relay/relay/test/liqo/tools/internal/geneveplan"
	"github.com/liqo-relay/relay/test/liqo/tools/internal/vxlanlink"
)

// guestConfig is the guest's parsed command line: Liqo's geneve container
// options and the stand-in's own.
type guestConfig struct {
	liqo    *gwfabric.Options
	standin standinFlags
}

// parseGuest parses the flags of Liqo's geneve container (cmd/gateway/geneve)
// with Liqo's own flag definitions.
func parseGuest(args []string) (*guestConfig, error) {
	c := &guestConfig{liqo: gwfabric.NewOptions(gateway.NewOptions())}
	fs := pflag.NewFlagSet("geneve-standin guest", pflag.ContinueOnError)
	flagsutils.InitKlogFlags(fs)
	restcfg.InitFlags(fs) // accepted as Liqo's geneve container accepts them; it does not apply them either
	gwfabric.InitFlags(fs, c.liqo)
	gateway.InitFlags(fs, c.liqo.GwOptions)
	c.standin.register(fs, true)
	if err := parseFlags(fs, args, flagNames(gateway.RequiredFlags)); err != nil {
		return nil, err
	}
	return c, nil
}

func runGuest(args []string) error {
	c, err := parseGuest(args)
	if errors.Is(err, errHelp) {
		return nil
	}
	if err != nil {
		return err
	}
	log, err := newLogger(c.standin.logLevel, roleGuest)
	if err != nil {
		return err
	}
	gw := c.liqo.GwOptions
	log.Info("starting", "gateway", gw.Namespace+"/"+gw.Name, "pod", gw.PodName, "node", gw.NodeName,
		"leader-election", gw.LeaderElection, "geneve-port", c.liqo.GenevePort)

	ctx, stop := signalContext(log)
	defer stop()

	cfg, err := config.GetConfig()
	if err != nil {
		return fmt.Errorf("getting the API server config: %w", err)
	}
	scheme := runtime.NewScheme()
	utilruntime.Must(networkingv1beta1.AddToScheme(scheme))
	// The cache holds only this gateway's namespace for the namespaced kinds:
	// that is all the geneve container reads.
	own := map[string]cache.Config{gw.Namespace: {}}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		MapperProvider:         mapper.LiqoMapperProvider(scheme),
		Scheme:                 scheme,
		Metrics:                server.Options{BindAddress: gw.MetricsAddress},
		HealthProbeBindAddress: gw.ProbeAddr,
		LeaderElection:         false,
		Cache: cache.Options{ByObject: map[client.Object]cache.ByObject{
			&networkingv1beta1.GeneveTunnel{}:   {Namespaces: own},
			&networkingv1beta1.InternalFabric{}: {Namespaces: own},
		}},
	})
	if err != nil {
		return fmt.Errorf("creating the manager: %w", err)
	}
	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		return fmt.Errorf("adding the healthz check: %w", err)
	}
	if err := mgr.AddReadyzCheck("readyz", healthz.Ping); err != nil {
		return fmt.Errorf("adding the readyz check: %w", err)
	}

	// As Liqo's container: with leader election the gateway container
	// decides when this replica starts; without it there is no IPC.
	if gw.LeaderElection {
		conn, err := guestHandshake(ctx, c.standin.ipcSocket, gw.ContainerName, log)
		if err != nil {
			if errors.Is(err, context.Canceled) {
				return nil
			}
			return err
		}
		defer func() { _ = conn.Close() }()
	}

	opts := geneveplan.Options{Port: c.liqo.GenevePort, DisableARP: c.liqo.DisableARP}
	return withLinks(log, c.standin.keepLinks, func(links *vxlanlink.Links) error {
		r := &endsReconciler{
			cl:    mgr.GetClient(),
			plan:  gatewayPlanner(gw.Namespace, gw.NodeName, opts),
			links: links,
			log:   log,
		}
		inNamespace := predicate.NewPredicateFuncs(func(o client.Object) bool { return o.GetNamespace() == gw.Namespace })
		if err := r.setup(mgr, "geneve-standin-gateway-ends", inNamespace); err != nil {
			return fmt.Errorf("setting up the gateway ends controller: %w", err)
		}
		return startManager(ctx, mgr)
	})
}
