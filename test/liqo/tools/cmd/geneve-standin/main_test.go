package main

import (
	"slices"
	"strings"
	"testing"
)

func TestRoleOf(t *testing.T) {
	for _, tc := range []struct {
		argv []string
		role string
		rest []string
		err  string
	}{
		{[]string{"geneve-standin", "guest", "--name=a"}, roleGuest, []string{"--name=a"}, ""},
		{[]string{"/bin/geneve-standin", "fabric"}, roleFabric, []string{}, ""},
		{[]string{"/usr/bin/fabric", "--nodename=n1"}, roleFabric, []string{"--nodename=n1"}, ""},
		{[]string{"liqo-geneve", "--name=a"}, roleGuest, []string{"--name=a"}, ""},
		{[]string{"geneve"}, roleGuest, []string{}, ""},
		{[]string{"geneve-standin", "nodes"}, "", nil, "unknown role"},
		{[]string{"geneve-standin", "--name=a"}, "", nil, "usage"},
	} {
		role, rest, err := roleOf(tc.argv)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("roleOf(%q) error %v, want %q", tc.argv, err, tc.err)
			}
			continue
		}
		if err != nil || role != tc.role || !slices.Equal(rest, tc.rest) {
			t.Errorf("roleOf(%q) = %q %q %v", tc.argv, role, rest, err)
		}
	}
}

// The geneve container's arguments as Liqo's chart renders them
// (deployments/liqo/templates/liqo-wireguard-gateway-client-template.yaml).
var chartGeneveArgs = []string{
	"--name=gw-provider-a", "--namespace=liqo-tenant-provider-a", "--remote-cluster-id=provider-a",
	"--node-name=ll-consumer-n1", "--pod-name=gw-provider-a-7d9f-x", "--gateway-uid=0b9c",
	"--mode=server", "--container-name=geneve", "--geneve-port=6091",
	"--health-probe-bind-address=:8087", "--leader-election=false",
}

func TestParseGuestChartArgs(t *testing.T) {
	c, err := parseGuest(chartGeneveArgs)
	if err != nil {
		t.Fatal(err)
	}
	gw := c.liqo.GwOptions
	if gw.Namespace != "liqo-tenant-provider-a" || gw.NodeName != "ll-consumer-n1" || gw.ContainerName != "geneve" ||
		gw.ProbeAddr != ":8087" || gw.LeaderElection || c.liqo.GenevePort != 6091 || c.liqo.DisableARP {
		t.Fatalf("parsed %+v %+v", *c.liqo, *gw)
	}
	if c.standin.ipcSocket != "/ipc/leader.sock" || c.standin.keepLinks || c.standin.logLevel != "info" {
		t.Fatalf("stand-in flags %+v", c.standin)
	}
	if _, err := parseGuest(append(slices.Clone(chartGeneveArgs), "--klog.v=4", "--standin-keep-links",
		"--leader-election=true", "--geneve-cleanup-interval=1m", "--disable-arp")); err != nil {
		t.Fatal(err)
	}
}

func TestParseGuestRequired(t *testing.T) {
	args := slices.DeleteFunc(slices.Clone(chartGeneveArgs), func(a string) bool {
		return strings.HasPrefix(a, "--node-name") || strings.HasPrefix(a, "--container-name")
	})
	_, err := parseGuest(args)
	if err == nil || !strings.Contains(err.Error(), "node-name") || !strings.Contains(err.Error(), "container-name") {
		t.Fatalf("parseGuest without node and container name: %v", err)
	}
	if _, err := parseGuest(append(slices.Clone(chartGeneveArgs), "stray")); err == nil {
		t.Fatal("stray argument accepted")
	}
}

// liqo-fabric's arguments as the chart renders them
// (deployments/liqo/templates/liqo-fabric-daemonset.yaml).
var chartFabricArgs = []string{
	"--podname=liqo-fabric-abcde", "--nodename=ll-consumer-n1", "--geneve-port=6091",
	"--health-probe-bind-address=:8081", "--metrics-address=:8082", "--disable-kernel-version-check",
	"--enable-nft-monitor=true", "--enable-route-monitor=true",
}

func TestParseFabricChartArgs(t *testing.T) {
	c, err := parseFabric(append(slices.Clone(chartFabricArgs), "--global-labels=a=b"))
	if err != nil {
		t.Fatal(err)
	}
	o := c.liqo
	if o.NodeName != "ll-consumer-n1" || o.PodName != "liqo-fabric-abcde" || o.GenevePort != 6091 ||
		!o.DisableKernelVersionCheck || !o.EnableNftMonitor || o.ProbeAddr != ":8081" || c.globalLabels.StringMap["a"] != "b" {
		t.Fatalf("parsed %+v", *o)
	}
	if _, err := parseFabric([]string{"--podname=x"}); err == nil || !strings.Contains(err.Error(), "nodename") {
		t.Fatalf("parseFabric without --nodename: %v", err)
	}
}
