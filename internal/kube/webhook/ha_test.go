package webhook

import (
	"slices"
	"strings"
	"testing"
)

func TestActiveInLabels(t *testing.T) {
	for _, tc := range []struct {
		in      string
		want    bool
		wantErr string
	}{
		{"app.kubernetes.io/name=\"consumer-1\"\nnetworking.liqo.io/active=\"true\"\n", true, ""},
		{"networking.liqo.io/active=\"false\"\n", false, ""},
		{"networking.liqo.io/component=\"gateway\"\n", false, ""},
		{"", false, ""},
		{"garbage\n", false, "line 1"},
		{"networking.liqo.io/active=true\n", false, "value of networking.liqo.io/active"},
	} {
		got, err := ActiveInLabels([]byte(tc.in))
		if got != tc.want || (err == nil) != (tc.wantErr == "") || (err != nil && !strings.Contains(err.Error(), tc.wantErr)) {
			t.Errorf("ActiveInLabels(%q) = %v, %v; want %v, %q", tc.in, got, err, tc.want, tc.wantErr)
		}
	}
}

// TestHAGatewayPodFollowsActiveLabel: a gateway pod with Liqo's leader
// election gets a relay that reads its pod's labels and starts in
// standby; a single-replica gateway's relay runs at once.
func TestHAGatewayPodFollowsActiveLabel(t *testing.T) {
	s := testSidecar(t)
	single := injectedPod(t, liqoGatewayPod(t), s, testLocal)
	ha := liqoGatewayPod(t)
	for i := range ha.Spec.Containers {
		ha.Spec.Containers[i].Args = append(ha.Spec.Containers[i].Args, leaderElectionArg)
	}
	delete(ha.Labels, ActiveLabel) // the leader sets it later
	ha = injectedPod(t, ha, s, testLocal)
	argsOf := func(pod []string) bool { return slices.Contains(pod, "--standby-labels") }
	if argsOf(single.Spec.Containers[3].Args) {
		t.Errorf("single replica relay args %v: want no standby", single.Spec.Containers[3].Args)
	}
	if a := ha.Spec.Containers[3].Args; !argsOf(a) || a[len(a)-1] != configDir+"/"+labelsFile {
		t.Errorf("HA relay args %v: want --standby-labels %s/%s", a, configDir, labelsFile)
	}
	items := ha.Spec.Volumes[0].DownwardAPI.Items
	if len(items) != 2 || items[1].Path != labelsFile || items[1].FieldRef.FieldPath != "metadata.labels" {
		t.Errorf("HA config volume items %+v: want the pod's labels as %s", items, labelsFile)
	}
}
