package webhook

import (
	"context"
	"errors"
	"fmt"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"
)

// What the controller writes goes in two ways. When the chart is
// uninstalled, the anchor (WebhookConfigAnchor) goes and the garbage
// collector deletes every object it owns. When a gateway goes (its
// GatewayServer or GatewayClient deleted, its pods gone), sync deletes the
// gateway's objects (removeGateway); sweep finds the gateways whose end the
// controller missed while it was not running.

// sweepInterval is how often the controller queues every gateway it has
// written objects for.
const sweepInterval = 10 * time.Minute

// WebhookConfigAnchor returns the anchor of the controller's objects: the
// MutatingWebhookConfiguration called name, which the chart installs and
// `helm uninstall` deletes. While it is missing or being deleted the
// controller writes nothing.
func WebhookConfigAnchor(cs kubernetes.Interface, name string) func(context.Context) (metav1.OwnerReference, error) {
	return func(ctx context.Context) (metav1.OwnerReference, error) {
		mwc, err := cs.AdmissionregistrationV1().MutatingWebhookConfigurations().Get(ctx, name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			return metav1.OwnerReference{}, fmt.Errorf("MutatingWebhookConfiguration %s is gone (the chart is being uninstalled, or --webhook-config is wrong): nothing is written without it", name)
		case err != nil:
			return metav1.OwnerReference{}, fmt.Errorf("reading MutatingWebhookConfiguration %s: %w", name, err)
		case mwc.DeletionTimestamp != nil:
			return metav1.OwnerReference{}, fmt.Errorf("MutatingWebhookConfiguration %s is being deleted: nothing is written", name)
		}
		return metav1.OwnerReference{
			APIVersion: admissionregistrationv1.SchemeGroupVersion.String(), Kind: "MutatingWebhookConfiguration",
			Name: mwc.Name, UID: mwc.UID,
		}, nil
	}
}

// removeGateway deletes what the controller wrote for the gateway ns/name:
// its RoleBinding, Service, NetworkPolicy, DNS Service and
// ClusterRoleBinding, key Secret and Relay, each only when it carries the
// controller's labels for that gateway.
func (c *Controller) removeGateway(ctx context.Context, ns, name string) error {
	mine := func(m metav1.Object) bool {
		l := m.GetLabels()
		return l["app.kubernetes.io/managed-by"] == ManagedBy && l[GatewayNameLabel] == name
	}
	del := func(kind, objName string, get func() (metav1.Object, error), remove func(metav1.DeleteOptions) error) error {
		o, err := get()
		switch {
		case apierrors.IsNotFound(err):
			return nil
		case err != nil:
			return wrap(err, "reading "+kind, metav1.ObjectMeta{Namespace: ns, Name: objName})
		case !mine(o):
			return nil
		}
		opts := deleteThis(metav1.ObjectMeta{UID: o.GetUID(), ResourceVersion: o.GetResourceVersion()})
		return wrap(ignoreGone(remove(opts)), "deleting "+kind, metav1.ObjectMeta{Namespace: ns, Name: objName})
	}
	rbs, svcs, nps, secrets := c.client.RbacV1().RoleBindings(ns), c.client.CoreV1().Services(ns),
		c.client.NetworkingV1().NetworkPolicies(ns), c.client.CoreV1().Secrets(ns)
	obj, np := objectName(name), shorten(objectName(name)+"-metrics", 63)
	errs := []error{
		del("RoleBinding", obj, func() (metav1.Object, error) { return rbs.Get(ctx, obj, metav1.GetOptions{}) },
			func(o metav1.DeleteOptions) error { return rbs.Delete(ctx, obj, o) }),
		del("Service", obj, func() (metav1.Object, error) { return svcs.Get(ctx, obj, metav1.GetOptions{}) },
			func(o metav1.DeleteOptions) error { return svcs.Delete(ctx, obj, o) }),
		del("NetworkPolicy", np, func() (metav1.Object, error) { return nps.Get(ctx, np, metav1.GetOptions{}) },
			func(o metav1.DeleteOptions) error { return nps.Delete(ctx, np, o) }),
		del("Secret", c.sidecar.KeySecret, func() (metav1.Object, error) { return secrets.Get(ctx, c.sidecar.KeySecret, metav1.GetOptions{}) },
			func(o metav1.DeleteOptions) error { return secrets.Delete(ctx, c.sidecar.KeySecret, o) }),
		c.removeDNS(ctx, ns, name),
		c.removeRelays(ctx, ns, name),
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	c.log.Info("gateway gone: removed its relay's objects", "namespace", ns, "gateway", name)
	return nil
}

// removeRelays deletes the Relays the controller made for the gateway.
func (c *Controller) removeRelays(ctx context.Context, ns, name string) error {
	api := c.dynamic.Resource(relaysGVR).Namespace(ns)
	sel := labels.SelectorFromSet(labels.Set{"app.kubernetes.io/managed-by": ManagedBy, GatewayNameLabel: name})
	list, err := api.List(ctx, metav1.ListOptions{LabelSelector: sel.String()})
	if err != nil {
		return fmt.Errorf("listing the Relays of gateway %s/%s: %w", ns, name, err)
	}
	var errs []error
	for _, r := range list.Items {
		opts := deleteThis(metav1.ObjectMeta{UID: r.GetUID(), ResourceVersion: r.GetResourceVersion()})
		errs = append(errs, wrap(ignoreGone(api.Delete(ctx, r.GetName(), opts)), "deleting Relay", metav1.ObjectMeta{Namespace: ns, Name: r.GetName()}))
	}
	return errors.Join(errs...)
}

// sweep queues every gateway that has a Relay the controller made: sync
// removes the objects of those that are gone.
func (c *Controller) sweep(ctx context.Context) {
	sel := labels.SelectorFromSet(labels.Set{"app.kubernetes.io/managed-by": ManagedBy})
	list, err := c.dynamic.Resource(relaysGVR).List(ctx, metav1.ListOptions{LabelSelector: sel.String()})
	if err != nil {
		c.log.Warn("sweep: listing the Relays the controller made", "err", err)
		return
	}
	for _, r := range list.Items {
		if gw := r.GetLabels()[GatewayNameLabel]; gw != "" {
			c.queue.Add(r.GetNamespace() + "/" + gw)
		}
	}
}

// deleteThis deletes only the object m was read as: one created again, or
// changed, since is someone else's to judge (the next sync reads it anew).
func deleteThis(m metav1.ObjectMeta) metav1.DeleteOptions {
	uid, rv := m.UID, m.ResourceVersion
	p := &metav1.Preconditions{}
	if uid != "" {
		p.UID = &uid
	}
	if rv != "" {
		p.ResourceVersion = &rv
	}
	return metav1.DeleteOptions{Preconditions: p}
}

// ignoreGone treats an object already deleted, or changed since it was
// read (a failed precondition), as nothing to delete now.
func ignoreGone(err error) error {
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return nil
	}
	return err
}
