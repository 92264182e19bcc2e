package agent_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/liqo-relay/relay/internal/control/admin"
	"github.com/liqo-relay/relay/internal/core/status"
)

// get fetches path from the admin server and returns status and body.
func get(t *testing.T, addr, path string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("GET %s: reading body: %v", path, err)
	}
	return resp.StatusCode, string(body)
}

// TestAdminServer runs A with an admin server on a free port and checks
// its endpoints against the running federation: /ping measures every path
// of a peer (404 for an unknown one), /status carries the fields scripts
// rely on, /metrics the path gauges, /healthz and /readyz answer.
func TestAdminServer(t *testing.T) {
	const direct, hop = 5 * time.Millisecond, 15 * time.Millisecond
	b := newBed(t, bedOptions{Direct: direct, Consumer: hop, AdminA: true})
	b.waitActive(relayA, relayB, "direct")
	waitFor(t, waitTimeout, "both of A's paths to B up", func() bool {
		p, _ := b.peer(relayA, relayB)
		up := 0
		for _, path := range p.Paths {
			if path.State == status.PathUp {
				up++
			}
		}
		return up == 2
	})
	addr := adminAddrOf(t, b, relayA)
	for _, p := range []string{"/healthz", "/readyz"} {
		if code, body := get(t, addr, p); code != http.StatusOK {
			t.Errorf("GET %s: %d %s", p, code, body)
		}
	}

	// Lower bounds only: a path's round trip cannot beat its emulated
	// delay, whatever the machine's load.
	checkPing(t, addr, relayB, map[string]time.Duration{"direct": 2 * direct, "consumer": 4 * hop})

	code, body := get(t, addr, "/ping?peer="+url.QueryEscape("no-such-peer"))
	if code != http.StatusNotFound {
		t.Errorf("ping of an unknown peer: %d %s, want 404", code, body)
	}

	code, body = get(t, addr, "/status")
	if code != http.StatusOK {
		t.Fatalf("GET /status: %d %s", code, body)
	}
	checkStatusJSON(t, body)

	code, body = get(t, addr, "/metrics")
	if code != http.StatusOK {
		t.Fatalf("GET /metrics: %d", code)
	}
	for _, want := range []string{
		fmt.Sprintf(`relay_path_up{path="direct",peer=%q} 1`, relayB),
		fmt.Sprintf(`relay_path_active{path="direct",peer=%q} 1`, relayB),
		fmt.Sprintf(`relay_path_active{path="consumer",peer=%q} 0`, relayB),
		`relay_path_rtt_seconds_bucket{`,
		`relay_probes_sent_total{`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}

// adminAddrOf waits until relay name's admin server listens and returns
// the address it bound.
func adminAddrOf(t *testing.T, b *bed, name string) string {
	t.Helper()
	var addr string
	waitFor(t, waitTimeout, name+"'s admin server to listen", func() bool {
		if a := b.agent(name).AdminAddr(); a != nil {
			addr = a.String()
			return true
		}
		return false
	})
	if strings.HasSuffix(addr, ":0") {
		t.Fatalf("AdminAddr %s is not the bound port", addr)
	}
	return addr
}

// checkPing pings peer through the admin server at addr and checks that
// every path in floors, and no other, answered with an RTT of at least its
// floor.
func checkPing(t *testing.T, addr, peer string, floors map[string]time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := admin.FetchPing(ctx, addr, peer)
	if err != nil {
		t.Fatalf("ping %s: %v", peer, err)
	}
	if len(res) != len(floors) {
		t.Fatalf("ping %s: %d results, want one per path: %+v", peer, len(res), res)
	}
	for _, r := range res {
		floor, ok := floors[r.Path]
		switch {
		case !ok:
			t.Errorf("ping: unexpected path %q", r.Path)
		case !r.OK || r.Error != "":
			t.Errorf("ping via %s failed: %+v", r.Path, r)
		case r.RTTMs < float64(floor)/float64(time.Millisecond):
			t.Errorf("ping via %s: RTT %.2f ms below the path's %s of emulated delay", r.Path, r.RTTMs, floor)
		}
		t.Logf("ping %s via %s: %.2f ms", peer, r.Path, r.RTTMs)
	}
}

// checkStatusJSON decodes /status generically, as a script would, and
// checks the fields scripts rely on.
func checkStatusJSON(t *testing.T, body string) {
	t.Helper()
	var st struct {
		Name  string           `json:"name"`
		Peers []map[string]any `json:"peers"`
	}
	if err := json.Unmarshal([]byte(body), &st); err != nil {
		t.Fatalf("/status is not JSON: %v", err)
	}
	if st.Name != relayA {
		t.Errorf("/status name %q, want %q", st.Name, relayA)
	}
	var peer map[string]any
	for _, p := range st.Peers {
		if p["name"] == relayB {
			peer = p
		}
	}
	if peer == nil {
		t.Fatalf("/status has no peer named %s: %s", relayB, body)
	}
	if peer["activePath"] != "direct" || peer["reachable"] != true {
		t.Errorf("/status %s: activePath %v, reachable %v", relayB, peer["activePath"], peer["reachable"])
	}
	paths, _ := peer["paths"].([]any)
	if len(paths) != 2 {
		t.Fatalf("/status %s: paths %v", relayB, peer["paths"])
	}
	for _, x := range paths {
		p, _ := x.(map[string]any)
		for _, f := range []string{"name", "endpoint", "state", "rttMs", "jitterMs", "loss", "lastChange"} {
			if _, ok := p[f]; !ok {
				t.Errorf("/status path %v lacks %q", p["name"], f)
			}
		}
		if p["state"] != "up" {
			t.Errorf("/status path %v state %v, want up", p["name"], p["state"])
		}
	}
}
