package manifests

import (
	"reflect"
	"testing"
)

// TestChartPodDisruptionBudgets: a component gets a PodDisruptionBudget
// only with more than one replica (one over a single pod would block node
// drains), maxUnavailable 1 and unhealthy pods always evictable, selecting
// exactly its Deployment's pods.
func TestChartPodDisruptionBudgets(t *testing.T) {
	h := helm(t)
	for _, c := range []struct {
		name string
		sets []string
		want []string // the components with a budget
	}{
		{"single", withBoth(), nil},
		{"operator-ha", []string{"operator.replicas=2"}, []string{"operator"}},
		{"inject-ha", withInject("components.operator.enabled=false", "inject.replicas=3", "inject.certManager.enabled=true"), []string{"inject"}},
		{"both-ha", withBoth("operator.replicas=3", "inject.replicas=2", "inject.certManager.enabled=true"), []string{"operator", "inject"}},
		{"off", []string{"components.operator.enabled=false", "operator.replicas=2"}, nil},
	} {
		v := variant{name: c.name, sets: c.sets}
		objs := decodeAll(t, c.name, v.render(t, h))
		if n := kinds(objs)["PodDisruptionBudget"]; n != len(c.want) {
			t.Errorf("%s: %d PodDisruptionBudgets, want %d (%v)", c.name, n, len(c.want), c.want)
		}
		for _, comp := range c.want {
			name := c.name + "-liqo-relay-" + comp
			pdb, d := find(objs, "PodDisruptionBudget", name), find(objs, "Deployment", name)
			if pdb == nil || d == nil {
				t.Errorf("%s: no PodDisruptionBudget or Deployment %s", c.name, name)
				continue
			}
			spec := pdb["spec"].(map[string]any)
			if spec["maxUnavailable"] != 1 || spec["minAvailable"] != nil || spec["unhealthyPodEvictionPolicy"] != "AlwaysAllow" ||
				get(pdb, "metadata", "namespace") != c.name {
				t.Errorf("%s: PodDisruptionBudget %s: %v", c.name, name, pdb)
			}
			sel := get(spec, "selector", "matchLabels").(map[string]any)
			if !reflect.DeepEqual(sel, get(d, "spec", "selector", "matchLabels")) {
				t.Errorf("%s: the budget selects %v, the Deployment %v", c.name, sel, get(d, "spec", "selector"))
			}
			for k, val := range sel {
				if get(d, "spec", "template", "metadata", "labels", k) != val {
					t.Errorf("%s: the Deployment's pods lack %s=%v", c.name, k, val)
				}
			}
		}
	}
}
