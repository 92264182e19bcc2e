package main

import (
	"context"
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/client"

	networkingv1beta1 "github.com/liqotech/liqo/apis/networking/v1beta1"
	"github.com/liqotech/liqo/pkg/consts"

	"github.com/liqo-relay/relay/test/liqo/tools/internal/geneveplan"
)

// gatewayPlanner plans the ends of the gateway pod in namespace, running on
// node podNode: the GeneveTunnels and InternalFabrics of its namespace and
// every InternalNode.
func gatewayPlanner(namespace, podNode string, opts geneveplan.Options) planner {
	return func(ctx context.Context, cl client.Reader) (geneveplan.Plan, error) {
		var o geneveplan.Objects
		var err error
		if o.Tunnels, err = listTunnels(ctx, cl, client.InNamespace(namespace)); err != nil {
			return geneveplan.Plan{}, err
		}
		if o.Nodes, err = listNodes(ctx, cl); err != nil {
			return geneveplan.Plan{}, err
		}
		if o.Fabrics, err = listFabrics(ctx, cl, client.InNamespace(namespace)); err != nil {
			return geneveplan.Plan{}, err
		}
		return geneveplan.GatewayEnds(o, namespace, podNode, opts), nil
	}
}

// nodePlanner plans the ends of node: the GeneveTunnels labelled for it,
// in any namespace, every InternalFabric and every InternalNode.
func nodePlanner(node string, opts geneveplan.Options) planner {
	return func(ctx context.Context, cl client.Reader) (geneveplan.Plan, error) {
		var o geneveplan.Objects
		var err error
		if o.Tunnels, err = listTunnels(ctx, cl, client.MatchingLabels{consts.InternalNodeName: node}); err != nil {
			return geneveplan.Plan{}, err
		}
		if o.Nodes, err = listNodes(ctx, cl); err != nil {
			return geneveplan.Plan{}, err
		}
		if o.Fabrics, err = listFabrics(ctx, cl); err != nil {
			return geneveplan.Plan{}, err
		}
		return geneveplan.NodeEnds(o, node, opts), nil
	}
}

func listTunnels(ctx context.Context, cl client.Reader, opts ...client.ListOption) ([]networkingv1beta1.GeneveTunnel, error) {
	var l networkingv1beta1.GeneveTunnelList
	if err := cl.List(ctx, &l, opts...); err != nil {
		return nil, fmt.Errorf("listing GeneveTunnels: %w", err)
	}
	return l.Items, nil
}

func listNodes(ctx context.Context, cl client.Reader) ([]networkingv1beta1.InternalNode, error) {
	var l networkingv1beta1.InternalNodeList
	if err := cl.List(ctx, &l); err != nil {
		return nil, fmt.Errorf("listing InternalNodes: %w", err)
	}
	return l.Items, nil
}

func listFabrics(ctx context.Context, cl client.Reader, opts ...client.ListOption) ([]networkingv1beta1.InternalFabric, error) {
	var l networkingv1beta1.InternalFabricList
	if err := cl.List(ctx, &l, opts...); err != nil {
		return nil, fmt.Errorf("listing InternalFabrics: %w", err)
	}
	return l.Items, nil
}
