package webhook

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	"github.com/liqo-relay/relay/internal/core/config"
	"github.com/liqo-relay/relay/internal/kube/keysecret"
)

// Liqo's gateway objects: what the controller writes for one exists while
// it does (cleanup.go).
var gatewayKinds = []struct {
	gvr  schema.GroupVersionResource
	kind string
}{
	{schema.GroupVersionResource{Group: "networking.liqo.io", Version: "v1beta1", Resource: "gatewayservers"}, "GatewayServer"},
	{schema.GroupVersionResource{Group: "networking.liqo.io", Version: "v1beta1", Resource: "gatewayclients"}, "GatewayClient"},
}

// relaysGVR is the project's Relay resource.
var relaysGVR = schema.GroupVersionResource{Group: "relay.liqo-relay.io", Version: "v1alpha1", Resource: "relays"}

// Recorder emits Kubernetes events (client-go's events.EventRecorder).
type Recorder interface {
	Eventf(regarding, related runtime.Object, eventtype, reason, action, note string, args ...any)
}

// Controller gives each Liqo gateway its relay's objects and reports
// gateway pods without the sidecar. Its unit of work is sync(key), key
// "namespace/gateway-name".
//
// Every object it writes is owned by the anchor, the webhook's own
// MutatingWebhookConfiguration: `helm uninstall` deletes the anchor, and
// Kubernetes' garbage collector then deletes all of them, in every
// namespace, LoadBalancer Services included. A gateway's objects go when
// the gateway goes, by the controller (cleanup.go): Kubernetes deletes an
// object with two owners only when both are gone.
type Controller struct {
	client    kubernetes.Interface
	dynamic   dynamic.Interface
	sidecar   *Sidecar
	pods      corelisters.PodLister
	anchor    func(context.Context) (metav1.OwnerReference, error)
	clusterID func(context.Context) (string, error)
	events    Recorder
	metrics   *Metrics
	log       *slog.Logger
	queue     workqueue.TypedRateLimitingInterface[string]
}

// ControllerOptions configure NewController.
type ControllerOptions struct {
	Client  kubernetes.Interface
	Dynamic dynamic.Interface
	Sidecar *Sidecar
	Pods    corelisters.PodLister
	// Anchor is the owner of every object the controller writes
	// (WebhookConfigAnchor); an error stops its writes.
	Anchor    func(context.Context) (metav1.OwnerReference, error)
	ClusterID func(context.Context) (string, error)
	Events    Recorder
	Metrics   *Metrics
	Log       *slog.Logger
}

// NewController returns a controller; feed it with the pod informer's
// events through Enqueue (PodHandler) and start it with Run.
func NewController(o ControllerOptions) *Controller {
	return &Controller{
		client: o.Client, dynamic: o.Dynamic, sidecar: o.Sidecar, pods: o.Pods, anchor: o.Anchor, clusterID: o.ClusterID,
		events: o.Events, metrics: o.Metrics, log: o.Log,
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "gateways"}),
	}
}

// GatewayKey is the queue key of a gateway pod; "" for other pods.
func GatewayKey(pod *corev1.Pod) string {
	gw := pod.Labels[GatewayNameLabel]
	if pod.Labels[ComponentLabel] != ComponentGateway || gw == "" {
		return ""
	}
	return pod.Namespace + "/" + gw
}

// PodHandler enqueues the gateway of every pod event.
func (c *Controller) PodHandler() cache.ResourceEventHandler {
	enqueue := func(obj any) {
		if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = t.Obj
		}
		if p, ok := obj.(*corev1.Pod); ok {
			if k := GatewayKey(p); k != "" {
				c.queue.Add(k)
			}
		}
	}
	return cache.ResourceEventHandlerFuncs{AddFunc: enqueue, UpdateFunc: func(_, n any) { enqueue(n) }, DeleteFunc: enqueue}
}

// Run processes the queue until ctx ends; every sweepInterval it also
// queues the gateways it has written objects for, so that a gateway that
// went while it was not running loses them (sweep).
func (c *Controller) Run(ctx context.Context) {
	var wg sync.WaitGroup
	defer wg.Wait()
	wg.Go(func() {
		<-ctx.Done()
		c.queue.ShutDown()
	})
	wg.Go(func() { wait.UntilWithContext(ctx, c.sweep, sweepInterval) })
	wait.UntilWithContext(ctx, func(ctx context.Context) {
		for c.processNext(ctx) {
		}
	}, time.Second)
}

func (c *Controller) processNext(ctx context.Context) bool {
	key, quit := c.queue.Get()
	if quit {
		return false
	}
	defer c.queue.Done(key)
	err := c.sync(ctx, key)
	switch {
	case err == nil:
		c.queue.Forget(key)
		c.count("ok")
	default:
		c.count("error")
		c.log.Warn("gateway sync failed; retrying", "gateway", key, "err", err)
		c.queue.AddRateLimited(key)
	}
	return true
}

func (c *Controller) count(result string) {
	if c.metrics != nil {
		c.metrics.syncs.WithLabelValues(result).Inc()
	}
}

// sync brings one gateway's objects to what they should be and reports
// its pods that lack the sidecar. Level-triggered and idempotent.
func (c *Controller) sync(ctx context.Context, key string) error {
	ns, name, ok := strings.Cut(key, "/")
	if !ok {
		return nil
	}
	sel := labels.SelectorFromSet(labels.Set{ComponentLabel: ComponentGateway, GatewayNameLabel: name})
	pods, err := c.pods.Pods(ns).List(sel)
	if err != nil {
		return fmt.Errorf("listing gateway pods: %w", err)
	}
	var relayPods []*corev1.Pod // not opted out
	missing := 0
	for _, p := range pods {
		if p.DeletionTimestamp != nil || p.Annotations[OptOutKey] == "false" {
			continue
		}
		relayPods = append(relayPods, p)
		if !hasContainer(p, ContainerName) {
			missing++
			if c.events != nil {
				c.events.Eventf(p, nil, corev1.EventTypeWarning, "RelaySidecarMissing", "Inject",
					"gateway pod has no %s container: the injection webhook was down or failed (failurePolicy Ignore); delete the pod to have it recreated with the sidecar", ContainerName)
			}
		}
	}
	if c.metrics != nil {
		if len(pods) == 0 {
			c.metrics.missing.DeleteLabelValues(ns, name)
		} else {
			c.metrics.missing.WithLabelValues(ns, name).Set(float64(missing))
		}
	}
	exists, err := c.gatewayExists(ctx, ns, name)
	if err != nil {
		return err
	}
	switch {
	case !exists && len(relayPods) == 0:
		// The gateway is gone: so are its objects.
		return c.removeGateway(ctx, ns, name)
	case len(relayPods) == 0:
		// No relay pods for now (opted out, or between two pods): the
		// objects stay for the next one, but the ClusterRoleBinding of
		// the DNS responder gives rights cluster-wide and goes.
		return c.removeDNSBinding(ctx, ns, name)
	case !exists:
		return fmt.Errorf("no GatewayServer or GatewayClient %s/%s yet: its objects wait for it", ns, name)
	}
	owner, err := c.anchor(ctx)
	if err != nil {
		return fmt.Errorf("the owner of the gateway's objects: %w", err)
	}
	sa := relayPods[0].Spec.ServiceAccountName
	if sa == "" {
		sa = name
	}
	g := gateway{namespace: ns, name: name, serviceAccount: sa, owner: owner}
	local, err := c.clusterID(ctx)
	if err != nil {
		return fmt.Errorf("local Liqo cluster ID: %w", err)
	}
	consumer := ConsumerID(relayPods[0])
	relay := RelayName(local, consumer, c.sidecar.NameIncludesConsumer)
	return errors.Join(
		c.ensureRoleBinding(ctx, g),
		c.ensureDNS(ctx, g, consumer),
		c.ensureService(ctx, g),
		c.ensureNetworkPolicy(ctx, g),
		c.ensureKeySecret(ctx, g, relay),
		c.ensureRelay(ctx, g, relay),
	)
}

// gatewayExists reports whether the gateway's GatewayServer or
// GatewayClient exists.
func (c *Controller) gatewayExists(ctx context.Context, ns, name string) (bool, error) {
	for _, k := range gatewayKinds {
		_, err := c.dynamic.Resource(k.gvr).Namespace(ns).Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return false, fmt.Errorf("reading %s %s/%s: %w", k.kind, ns, name, err)
		}
		return true, nil
	}
	return false, nil
}

func (c *Controller) ensureRoleBinding(ctx context.Context, g gateway) error {
	want := c.sidecar.roleBinding(g)
	api := c.client.RbacV1().RoleBindings(g.namespace)
	have, err := api.Get(ctx, want.Name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		_, err = api.Create(ctx, want, metav1.CreateOptions{})
		return wrap(err, "creating RoleBinding", want.ObjectMeta)
	case err != nil:
		return wrap(err, "reading RoleBinding", want.ObjectMeta)
	case notOurs("RoleBinding", have.ObjectMeta) != nil:
		return notOurs("RoleBinding", have.ObjectMeta)
	case have.RoleRef != want.RoleRef:
		// roleRef is immutable: replace the binding.
		if err := api.Delete(ctx, want.Name, metav1.DeleteOptions{}); err != nil {
			return wrap(err, "replacing RoleBinding", want.ObjectMeta)
		}
		_, err = api.Create(ctx, want, metav1.CreateOptions{})
		return wrap(err, "creating RoleBinding", want.ObjectMeta)
	case !reflect.DeepEqual(have.Subjects, want.Subjects) || !sameMeta(have.ObjectMeta, want.ObjectMeta):
		have.Subjects = want.Subjects
		mergeMeta(&have.ObjectMeta, want.ObjectMeta)
		_, err = api.Update(ctx, have, metav1.UpdateOptions{})
		return wrap(err, "updating RoleBinding", want.ObjectMeta)
	}
	return nil
}

func (c *Controller) ensureService(ctx context.Context, g gateway) error {
	want := c.sidecar.service(g)
	api := c.client.CoreV1().Services(g.namespace)
	have, err := api.Get(ctx, want.Name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		_, err = api.Create(ctx, want, metav1.CreateOptions{})
		return wrap(err, "creating Service", want.ObjectMeta)
	case err != nil:
		return wrap(err, "reading Service", want.ObjectMeta)
	case notOurs("Service", have.ObjectMeta) != nil:
		return notOurs("Service", have.ObjectMeta)
	}
	// Compare only what we set: the API server fills in the rest
	// (clusterIP, nodePort, ...).
	same := have.Spec.Type == want.Spec.Type && have.Spec.ExternalTrafficPolicy == want.Spec.ExternalTrafficPolicy &&
		reflect.DeepEqual(have.Spec.Selector, want.Spec.Selector) && len(have.Spec.Ports) == 1 &&
		have.Spec.Ports[0].Port == want.Spec.Ports[0].Port && have.Spec.Ports[0].Protocol == corev1.ProtocolUDP &&
		have.Spec.Ports[0].TargetPort == want.Spec.Ports[0].TargetPort && sameMeta(have.ObjectMeta, want.ObjectMeta)
	if same {
		return nil
	}
	nodePort := int32(0)
	if len(have.Spec.Ports) == 1 && want.Spec.Type != corev1.ServiceTypeClusterIP {
		nodePort = have.Spec.Ports[0].NodePort
	}
	have.Spec.Type, have.Spec.ExternalTrafficPolicy, have.Spec.Selector = want.Spec.Type, want.Spec.ExternalTrafficPolicy, want.Spec.Selector
	have.Spec.Ports = want.Spec.Ports
	have.Spec.Ports[0].NodePort = nodePort
	mergeMeta(&have.ObjectMeta, want.ObjectMeta)
	_, err = api.Update(ctx, have, metav1.UpdateOptions{})
	return wrap(err, "updating Service", want.ObjectMeta)
}

func (c *Controller) ensureNetworkPolicy(ctx context.Context, g gateway) error {
	want := c.sidecar.networkPolicy(g)
	api := c.client.NetworkingV1().NetworkPolicies(g.namespace)
	have, err := api.Get(ctx, want.Name, metav1.GetOptions{})
	switch {
	case !c.sidecar.NetworkPolicyEnabled():
		if err == nil && have.Labels["app.kubernetes.io/managed-by"] == ManagedBy {
			return wrap(api.Delete(ctx, want.Name, metav1.DeleteOptions{}), "deleting NetworkPolicy", want.ObjectMeta)
		}
		return nil
	case apierrors.IsNotFound(err):
		_, err = api.Create(ctx, want, metav1.CreateOptions{})
		return wrap(err, "creating NetworkPolicy", want.ObjectMeta)
	case err != nil:
		return wrap(err, "reading NetworkPolicy", want.ObjectMeta)
	case notOurs("NetworkPolicy", have.ObjectMeta) != nil:
		return notOurs("NetworkPolicy", have.ObjectMeta)
	case !reflect.DeepEqual(have.Spec, want.Spec) || !sameMeta(have.ObjectMeta, want.ObjectMeta):
		have.Spec = want.Spec
		mergeMeta(&have.ObjectMeta, want.ObjectMeta)
		_, err = api.Update(ctx, have, metav1.UpdateOptions{})
		return wrap(err, "updating NetworkPolicy", want.ObjectMeta)
	}
	return nil
}

// ensureKeySecret creates the relay's key Secret with a new key when it
// does not exist (internal/kube/keysecret, as the relay itself would),
// labelled as the gateway's other objects and owned by the anchor.
func (c *Controller) ensureKeySecret(ctx context.Context, g gateway, relay string) error {
	secrets := ownedSecrets{c.client.CoreV1().Secrets(g.namespace), g.meta()}
	ref := config.SecretRef{Name: c.sidecar.KeySecret, Key: config.DefaultSecretKey}
	_, created, err := keysecret.Load(ctx, secrets, ref, relay)
	if err != nil {
		return fmt.Errorf("key Secret %s/%s: %w", g.namespace, ref.Name, err)
	}
	if created {
		c.log.Info("created the relay's key Secret", "namespace", g.namespace, "secret", ref.Name, "relay", relay)
		return nil
	}
	return c.adoptKeySecret(ctx, g, ref.Name, relay)
}

// adoptKeySecret gives the relay's key Secret, when the relay created it
// itself (it does when it starts before this sync), the controller's
// labels and the anchor, so that it goes with the gateway and on
// uninstall like the rest. A Secret of that name the relay did not create
// (no relay label for this relay) is left alone.
func (c *Controller) adoptKeySecret(ctx context.Context, g gateway, name, relay string) error {
	api := c.client.CoreV1().Secrets(g.namespace)
	have, err := api.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return wrap(err, "reading Secret", metav1.ObjectMeta{Namespace: g.namespace, Name: name})
	}
	want := g.meta()
	if have.Labels[keysecret.RelayLabel] != relay || sameMeta(have.ObjectMeta, want) {
		return nil
	}
	mergeMeta(&have.ObjectMeta, want)
	_, err = api.Update(ctx, have, metav1.UpdateOptions{})
	return wrap(err, "adopting the relay's key Secret", have.ObjectMeta)
}

// ownedSecrets adds the gateway's labels and owner reference to the Secret
// it creates.
type ownedSecrets struct {
	keysecret.Secrets
	meta metav1.ObjectMeta
}

func (o ownedSecrets) Create(ctx context.Context, s *corev1.Secret, opts metav1.CreateOptions) (*corev1.Secret, error) {
	if s.Labels == nil {
		s.Labels = map[string]string{}
	}
	for k, v := range o.meta.Labels {
		s.Labels[k] = v
	}
	s.OwnerReferences = append(s.OwnerReferences, o.meta.OwnerReferences...)
	return o.Secrets.Create(ctx, s, opts)
}

// ensureRelay creates the relay's Relay object, when it does not exist,
// with spec.serviceRef naming the relay's Service (LoadBalancer only: the
// relay reads its endpoints from the Service's ingress), owned by the
// gateway. The relay keeps its status; its spec is then the user's.
func (c *Controller) ensureRelay(ctx context.Context, g gateway, relay string) error {
	api := c.dynamic.Resource(relaysGVR).Namespace(g.namespace)
	_, err := api.Get(ctx, relay, metav1.GetOptions{})
	if err == nil || !apierrors.IsNotFound(err) {
		return wrap(err, "reading Relay", metav1.ObjectMeta{Namespace: g.namespace, Name: relay})
	}
	spec := map[string]any{}
	if c.sidecar.Service.Type == corev1.ServiceTypeLoadBalancer {
		spec["serviceRef"] = map[string]any{"name": objectName(g.name), "port": int64(c.sidecar.Port)}
	}
	m := g.meta()
	o := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": relaysGVR.GroupVersion().String(), "kind": "Relay",
		"metadata": map[string]any{"name": relay, "namespace": g.namespace},
		"spec":     spec,
	}}
	o.SetLabels(m.Labels)
	o.SetOwnerReferences(m.OwnerReferences)
	_, err = api.Create(ctx, o, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	return wrap(err, "creating Relay", metav1.ObjectMeta{Namespace: g.namespace, Name: relay})
}
