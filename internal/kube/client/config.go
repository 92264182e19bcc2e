package client

import (
	"fmt"
	"log/slog"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"
)

// RESTConfig is the client configuration of kubeconfig, or the in-cluster
// one when kubeconfig is empty.
func RESTConfig(kubeconfig string) (*rest.Config, error) {
	var cfg *rest.Config
	var err error
	if kubeconfig != "" {
		cfg, err = clientcmd.BuildConfigFromFlags("", kubeconfig)
	} else {
		cfg, err = rest.InClusterConfig()
	}
	if err != nil {
		return nil, fmt.Errorf("kubernetes: %w", err)
	}
	return cfg, nil
}

// RouteClientLogs sends client-go's own logs (klog: watch failures, retries
// while the API server is away) to log, so they are part of the process's
// structured log instead of lines of another format on stderr. klog is
// process-wide: each process calls it once, before its first client.
func RouteClientLogs(log *slog.Logger) {
	klog.SetSlogLogger(log.With("component", "client-go"))
}
