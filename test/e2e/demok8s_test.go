package e2e

import (
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/liqo-relay/relay/api/v1alpha1"
)

// demoEnv turns TestDemoK8s on: `make demo-k8s` sets it. Without it the
// demo is skipped, so that `make test` does not run it twice (TestE2EFCC
// covers the same ground with assertions).
const demoEnv = "LIQO_RELAY_DEMO_K8S"

// TestDemoK8s is `make demo-k8s`: the world of TestE2EFCC (three API
// servers, Liqo's model, two relays, the operator), one FCC, and `kubectl
// get fcc` printed as the direct link is cut; everything is
// removed at the end (t.Cleanup), also on failure or interrupt of the test.
func TestDemoK8s(t *testing.T) {
	if os.Getenv(demoEnv) == "" {
		t.Skip("the demo runs with " + demoEnv + "=1 (make demo-k8s)")
	}
	requireK8sTools(t)
	say := func(format string, args ...any) { fmt.Printf("\n### "+format+"\n", args...) }
	say("bringing up the consumer and two providers (API servers, Liqo's data path in namespaces, relays, operator)")
	w := newFCCWorld(t)
	m := w.m

	say("kubectl apply: ForeignClusterConnection a-b (provider-a <-> provider-b, pod CIDRs both %s)", lqPodCIDR)
	w.applyFCC(t, "a-b")
	table := w.watchTable(t)
	w.waitFCC(t, "a-b", "Connected over the direct path", func(st v1alpha1.ForeignClusterConnectionStatus) bool {
		return st.Phase == v1alpha1.PhaseConnected && on("direct")(st)
	})
	table.flush()
	a1, b1 := m.a.pods[0], m.b.pods[0]
	say("pod a1 (%s in provider-a) pings b1 (%s in provider-b, which A's pods dial as %s)", a1.ip, b1.ip, m.a.view(b1.ext))
	fmt.Print(m.a.pods[0].ns.Run(t, "ping", "-c", "2", "-i", "0.2", m.a.view(b1.ext)))

	say("cutting the direct link between the providers' gateways")
	m.a.gw.Run(t, "ip", "link", "set", m.a.directIf, "down")
	w.waitFCC(t, "a-b", "both directions on the consumer path", on("consumer"))
	table.flush()
	fmt.Print(m.a.pods[0].ns.Run(t, "ping", "-c", "2", "-i", "0.2", m.a.view(b1.ext)))

	say("kubectl delete fcc a-b: the operator removes both RelayPeers")
	w.consumer.Kubectl(t, "delete", "fcc", "a-b", "--wait=true", "--timeout=60s")
	fmt.Printf("RelayPeers left: provider-a %d, provider-b %d\n", len(w.a.relayPeers(t)), len(w.b.relayPeers(t)))
	table.stop()
	say("cleaning up: relays, operator, API servers, namespaces")
}

// fccTable prints `kubectl get fcc` each time its rows change.
type fccTable struct {
	mu   sync.Mutex // print runs from the poller and from flush
	w    *fccWorld
	t    *testing.T
	last string
	done chan struct{}
	quit chan struct{}
}

// watchTable polls the table every 200 ms in a goroutine that stop ends.
func (w *fccWorld) watchTable(t *testing.T) *fccTable {
	tb := &fccTable{w: w, t: t, done: make(chan struct{}), quit: make(chan struct{})}
	go func() {
		defer close(tb.done)
		tick := time.NewTicker(200 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-tb.quit:
				return
			case <-tick.C:
				tb.print()
			}
		}
	}()
	t.Cleanup(tb.stop)
	return tb
}

// print prints the table when its rows (without AGE) changed.
func (tb *fccTable) print() {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	out, err := tb.w.consumer.KubectlErr("get", "fcc")
	if err != nil {
		return
	}
	key := ""
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		f := strings.Fields(l)
		if len(f) > 1 {
			key += strings.Join(f[:len(f)-1], " ") + "\n"
		}
	}
	if key == tb.last {
		return
	}
	tb.last = key
	fmt.Printf("%s $ kubectl get fcc\n%s", time.Now().Format("15:04:05.000"), out)
}

// flush prints the table now if it changed since the last print.
func (tb *fccTable) flush() { tb.print() }

func (tb *fccTable) stop() {
	select {
	case <-tb.quit:
	default:
		close(tb.quit)
	}
	<-tb.done
}
