// Package labservices gives the real-Liqo lab (test/liqo) the two cluster
// services a cloud or an add-on gives a real cluster, and that neither the
// Kubernetes control plane nor kube-proxy provides:
//
//   - LoadBalancer Services: each gets an ingress address from a pool on
//     the lab's underlay, written to its status, and a host route for it
//     in the underlay's router namespace via the cluster's node. kube-proxy
//     (nftables mode) on the node then forwards the address to the
//     Service's endpoints, as it does for a cloud load balancer's address.
//   - Cluster DNS: A records for Services (the ClusterIP, or the ready
//     endpoints of a headless Service) under <svc>.<ns>.svc.<domain>, as
//     CoreDNS's kubernetes plugin answers them; NXDOMAIN for every other
//     name (the lab has no upstream resolver).
//
// Both are level-triggered: a controller syncs one Service key at a time
// from an informer's cache, and the DNS server reads the same caches.
package labservices
