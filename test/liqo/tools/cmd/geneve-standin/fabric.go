package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/selection"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/config"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	networkingv1beta1 "github.com/liqotech/liqo/apis/networking/v1beta1"
	"github.com/liqotech/liqo/pkg/consts"
	"github.com/liqotech/liqo/pkg/fabric"
	sourcedetector "github.com/liqotech/liqo/pkg/fabric/source-detector"
	"github.com/liqotech/liqo/pkg/firewall"
	"github.com/liqotech/liqo/pkg/gateway"
	"github.com/liqotech/liqo/pkg/gateway/concurrent"
	"github.com/liqotech/liqo/pkg/liqo-controller-manager/networking/external-network/remapping"
	"github.com/liqotech/liqo/pkg/route"
	argsutils "github.com/liqotech/liqo/pkg/utils/args"
	flagsutils "github.com/liqotech/liqo/pkg/utils/flags"
	kernelversion "github.com/liqotech/liqo/pkg/utils/kernel/version"
	"github.com/liqotech/liqo/pkg/utils/mapper"
	"github.com/liqotech/liqo/pkg/utils/resource"
	"github.com/liqotech/liqo/pkg/utils/restcfg"

	"github.com/liqo-relay/relay/test/liqo/tools/internal/geneveplan"
	"github.com/liqo-relay/relay/test/liqo/tools/internal/vxlanlink"
)

// fabricConfig is the fabric role's parsed command line: liqo-fabric's
// options and the stand-in's own.
type fabricConfig struct {
	liqo              *fabric.Options
	globalLabels      argsutils.StringMap
	globalAnnotations argsutils.StringMap
	standin           standinFlags
}

// parseFabric parses liqo-fabric's flags (cmd/fabric) with Liqo's own flag
// definitions.
func parseFabric(args []string) (*fabricConfig, error) {
	c := &fabricConfig{liqo: fabric.NewOptions()}
	fs := pflag.NewFlagSet("geneve-standin fabric", pflag.ContinueOnError)
	flagsutils.InitKlogFlags(fs)
	restcfg.InitFlags(fs) // accepted as liqo-fabric accepts them; it does not apply them either
	fabric.InitFlags(fs, c.liqo)
	fs.Var(&c.globalLabels, "global-labels", "Global labels to be added to all created resources (key=value)")
	fs.Var(&c.globalAnnotations, "global-annotations", "Global annotations to be added to all created resources (key=value)")
	c.standin.register(fs, false)
	if err := parseFlags(fs, args, flagNames(fabric.RequiredFlags)); err != nil {
		return nil, err
	}
	return c, nil
}

// runFabric is liqo-fabric with its geneve controller and geneve cleanup
// replaced by the stand-in's node-end controller. Everything else is
// Liqo's code, wired as cmd/fabric wires it.
func runFabric(args []string) error {
	c, err := parseFabric(args)
	if errors.Is(err, errHelp) {
		return nil
	}
	if err != nil {
		return err
	}
	o := c.liqo
	if !o.DisableKernelVersionCheck {
		if err := kernelversion.CheckKernelVersion(&o.MinimumKernelVersion); err != nil {
			return fmt.Errorf("kernel version check failed: %w, disable this check with --%s", err, fabric.FlagNameDisableKernelVersionCheck)
		}
	}
	log, err := newLogger(c.standin.logLevel, roleFabric)
	if err != nil {
		return err
	}
	log.Info("starting", "node", o.NodeName, "pod", o.PodName, "geneve-port", o.GenevePort)
	resource.SetGlobalLabels(c.globalLabels.StringMap)
	resource.SetGlobalAnnotations(c.globalAnnotations.StringMap)

	ctx, stop := signalContext(log)
	defer stop()

	mgr, err := newFabricManager(o)
	if err != nil {
		return err
	}
	if err := setupLiqoFabricControllers(ctx, mgr, o); err != nil {
		return err
	}

	opts := geneveplan.Options{Port: o.GenevePort, DisableARP: o.DisableARP}
	return withLinks(log, c.standin.keepLinks, func(links *vxlanlink.Links) error {
		r := &endsReconciler{
			cl:    mgr.GetClient(),
			plan:  nodePlanner(o.NodeName, opts),
			links: links,
			log:   log,
		}
		forNode := predicate.NewPredicateFuncs(func(obj client.Object) bool {
			return obj.GetLabels()[consts.InternalNodeName] == o.NodeName
		})
		if err := r.setup(mgr, "geneve-standin-node-ends", forNode); err != nil {
			return fmt.Errorf("setting up the node ends controller: %w", err)
		}
		return startManager(ctx, mgr)
	})
}

// newFabricManager is liqo-fabric's controller manager: Liqo's scheme and
// mapper, its metrics and probe addresses, and a cache of only the active
// gateway pods.
func newFabricManager(o *fabric.Options) (ctrl.Manager, error) {
	cfg, err := config.GetConfig()
	if err != nil {
		return nil, fmt.Errorf("getting the API server config: %w", err)
	}
	scheme := runtime.NewScheme()
	utilruntime.Must(networkingv1beta1.AddToScheme(scheme))
	utilruntime.Must(corev1.AddToScheme(scheme))

	// liqo-fabric caches only the active gateway pods.
	isGateway, err := labels.NewRequirement(gateway.GatewayComponentKey, selection.Equals, []string{gateway.GatewayComponentGateway})
	if err != nil {
		return nil, fmt.Errorf("gateway pod selector: %w", err)
	}
	isActive, err := labels.NewRequirement(concurrent.ActiveGatewayKey, selection.Equals, []string{concurrent.ActiveGatewayValue})
	if err != nil {
		return nil, fmt.Errorf("active gateway pod selector: %w", err)
	}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		MapperProvider:         mapper.LiqoMapperProvider(scheme),
		Scheme:                 scheme,
		Metrics:                server.Options{BindAddress: o.MetricsAddress},
		HealthProbeBindAddress: o.ProbeAddr,
		LeaderElection:         false,
		NewCache: func(config *rest.Config, opts cache.Options) (cache.Cache, error) {
			opts.ByObject = map[client.Object]cache.ByObject{
				&corev1.Pod{}: {Label: labels.NewSelector().Add(*isGateway, *isActive)},
			}
			return cache.New(config, opts)
		},
	})
	if err != nil {
		return nil, fmt.Errorf("creating the manager: %w", err)
	}
	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		return nil, fmt.Errorf("adding the healthz check: %w", err)
	}
	if err := mgr.AddReadyzCheck("readyz", healthz.Ping); err != nil {
		return nil, fmt.Errorf("adding the readyz check: %w", err)
	}
	return mgr, nil
}

// setupLiqoFabricControllers adds the controllers of liqo-fabric the
// stand-in keeps, Liqo's code as cmd/fabric wires it: the gateway source
// detector, the firewall and the route configuration controllers.
func setupLiqoFabricControllers(ctx context.Context, mgr ctrl.Manager, o *fabric.Options) error {
	gwr, err := sourcedetector.NewGatewayReconciler(mgr.GetClient(), mgr.GetScheme(),
		legacyRecorder(mgr, "gateway-controller"), o)
	if err != nil {
		return fmt.Errorf("creating Liqo's gateway source detector: %w", err)
	}
	if err := gwr.SetupWithManager(mgr); err != nil {
		return fmt.Errorf("setting up Liqo's gateway source detector: %w", err)
	}

	fwcr, err := firewall.NewFirewallConfigurationReconcilerWithFinalizer(mgr.GetClient(), mgr.GetScheme(),
		o.PodName, legacyRecorder(mgr, "firewall-controller"),
		[]labels.Set{
			fabric.ForgeFirewallTargetLabels(),
			remapping.ForgeFirewallTargetLabelsIPMappingFabric(),
			fabric.ForgeFirewallTargetLabelsSingleNode(o.NodeName),
		})
	if err != nil {
		return fmt.Errorf("creating Liqo's firewall configuration controller: %w", err)
	}
	if err := fwcr.SetupWithManager(ctx, mgr, o.EnableNftMonitor, o.ReconcileTimeout); err != nil {
		return fmt.Errorf("setting up Liqo's firewall configuration controller: %w", err)
	}

	rcr, err := route.NewRouteConfigurationReconcilerWithFinalizer(mgr.GetClient(), mgr.GetScheme(),
		o.PodName, legacyRecorder(mgr, "route-controller"), []labels.Set{fabric.ForgeRouteTargetLabels()})
	if err != nil {
		return fmt.Errorf("creating Liqo's route configuration controller: %w", err)
	}
	if err := rcr.SetupWithManager(ctx, mgr, o.EnableRouteMonitor, o.ReconcileTimeout); err != nil {
		return fmt.Errorf("setting up Liqo's route configuration controller: %w", err)
	}
	return nil
}

// legacyRecorder is the core/v1 event recorder Liqo's fabric controllers
// take (record.EventRecorder), under the names liqo-fabric gives them.
func legacyRecorder(mgr ctrl.Manager, name string) record.EventRecorder {
	//lint:ignore SA1019 Liqo v1.2.0's constructors take the old recorder type.
	return mgr.GetEventRecorderFor(name)
}
