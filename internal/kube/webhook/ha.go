package webhook

import (
	"bufio"
	"bytes"
	"fmt"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// HA (docs/inject.md, "Gateway HA"): with Liqo's leader election, only the
// replica labelled networking.liqo.io/active=true carries traffic. Its
// relay runs; the relays of the passive replicas wait in standby (no
// device, no WireGuard, no probes, no Relay status), answering /healthz
// and /readyz, and start when their pod becomes active. A relay whose pod
// stops being active exits, and its container restarts into standby. The
// relay reads its pod's labels from a downward API file.

// leaderElectionArg is the argument of Liqo's gateway containers that
// turns on leader election between replicas (Liqo v1.2.0 chart:
// liqo-wireguard-gateway-{server,client}-template.yaml, set when
// networking.gatewayTemplates.replicas > 1).
const leaderElectionArg = "--leader-election=true"

// labelsFile is the downward API file of the pod's labels.
const labelsFile = "labels"

// LeaderElection reports whether a gateway pod elects a leader among
// replicas, so that its relay must follow the active label.
func LeaderElection(pod *corev1.Pod) bool {
	for _, c := range pod.Spec.Containers {
		for _, a := range c.Args {
			if a == leaderElectionArg {
				return true
			}
		}
	}
	return false
}

// ActiveInLabels reports whether a downward API labels file (lines
// key="value", the value quoted as Go does) says the pod is the active
// gateway replica.
func ActiveInLabels(data []byte) (bool, error) {
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			return false, fmt.Errorf("line %d: %q is not key=\"value\"", n, line)
		}
		if k != ActiveLabel {
			continue
		}
		val, err := strconv.Unquote(v)
		if err != nil {
			return false, fmt.Errorf("line %d: value of %s: %w", n, k, err)
		}
		return val == "true", nil
	}
	return false, sc.Err()
}
