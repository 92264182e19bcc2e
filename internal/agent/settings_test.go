package agent

import (
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/liqo-relay/relay/internal/core/config"
	"github.com/liqo-relay/relay/internal/core/failover"
	"github.com/liqo-relay/relay/internal/core/health"
)

// settingsDoc has two peers; %GLOBAL% is replaced by a global health line
// and %PEER% by provider-b's health line.
const settingsDoc = `name: provider-a
privateKeyFile: /etc/relay/key
addresses: [100.80.0.1/32]
%GLOBAL%
peers:
  - name: provider-b
    publicKey: HIgo9xNzJMWLKASShiTqIybxZ0U3wGLiUeJ1PKf8ykw=
    prefixes: [10.72.0.0/16]
    paths: [{name: direct, endpoint: 192.0.2.10:51900}]
%PEER%
  - name: provider-c
    publicKey: AQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQE=
    prefixes: [10.73.0.0/16]
    paths: [{name: direct, endpoint: 192.0.2.11:51900}]
`

// settingField is one leaf field of a settings struct.
type settingField struct {
	yaml  string // like "betterHold" or "dampening.reuse"
	index []int
}

// settingFields lists the leaf fields of a settings struct type, named as
// in the YAML (lowerCamelCase, nested with "."), without LossWindow, which
// is not a configuration setting.
func settingFields(t reflect.Type) []settingField {
	var out []settingField
	var walk func(t reflect.Type, prefix string, index []int)
	walk = func(t reflect.Type, prefix string, index []int) {
		for i := range t.NumField() {
			f := t.Field(i)
			idx := append(append([]int(nil), index...), i)
			name := prefix + string(unicode.ToLower(rune(f.Name[0]))) + f.Name[1:]
			switch {
			case f.Name == "LossWindow":
			case f.Type.Kind() == reflect.Struct:
				walk(f.Type, name+".", idx)
			default:
				out = append(out, settingField{yaml: name, index: idx})
			}
		}
	}
	walk(t, "", nil)
	return out
}

// nonDefault sets v, a default value, to a different valid value and
// returns that value as YAML.
func nonDefault(t *testing.T, name string, v reflect.Value) string {
	t.Helper()
	switch {
	case v.Type() == reflect.TypeFor[time.Duration]():
		d := 2*time.Duration(v.Int()) + time.Millisecond
		v.SetInt(int64(d))
		return d.String()
	case v.Kind() == reflect.Int:
		v.SetInt(v.Int() + 1)
		return strconv.FormatInt(v.Int(), 10)
	case v.Kind() == reflect.Float64:
		f := v.Float() / 2 // keeps ratios within 0..1 and reuse below suppress
		if f == 0 {
			f = 0.5
		}
		v.SetFloat(f)
		return strconv.FormatFloat(f, 'g', -1, 64)
	case v.Kind() == reflect.Bool:
		v.SetBool(!v.Bool())
		return strconv.FormatBool(v.Bool())
	case name == "selector":
		for _, s := range []failover.Algorithm{failover.SelectorLowestCost, failover.SelectorNaive} {
			if string(s) != v.String() {
				v.SetString(string(s))
				return string(s)
			}
		}
	case name == "redundancy":
		for _, s := range []failover.Redundancy{failover.RedundancyDuplicate, failover.RedundancyAuto} {
			if string(s) != v.String() {
				v.SetString(string(s))
				return string(s)
			}
		}
	}
	t.Fatalf("%s: no non-default value known for a %v: extend nonDefault", name, v.Type())
	return ""
}

func flow(path, value string) string {
	parts := strings.Split(path, ".")
	for i := len(parts) - 1; i >= 0; i-- {
		value = "{" + parts[i] + ": " + value + "}"
	}
	return value
}

// TestEveryHealthSettingReachesMonitorAndSelector: every field of
// health.Settings and failover.Settings, found by reflection, set to a
// non-default value in the YAML, reaches the settings the agent gives the
// health monitor and the failover selector, and changes nothing else. Set
// in one peer's health block it reaches that peer only; set globally it
// reaches every peer.
func TestEveryHealthSettingReachesMonitorAndSelector(t *testing.T) {
	type settings struct {
		h health.Settings
		f failover.Settings
	}
	defaults := settings{health.DefaultSettings(), failover.DefaultSettings()}
	n := 0
	for part, typ := range []reflect.Type{reflect.TypeFor[health.Settings](), reflect.TypeFor[failover.Settings]()} {
		for _, field := range settingFields(typ) {
			n++
			want := defaults
			wantV := reflect.ValueOf(&want.h).Elem()
			if part == 1 {
				wantV = reflect.ValueOf(&want.f).Elem()
			}
			value := nonDefault(t, field.yaml, wantV.FieldByIndex(field.index))
			line := "health: " + flow(field.yaml, value)
			for _, tc := range []struct {
				scope        string
				global, peer string
				wantB, wantC settings
			}{
				{"peer", "", "    " + line, want, defaults},
				{"global", line, "", want, want},
			} {
				doc := strings.NewReplacer("%GLOBAL%", tc.global, "%PEER%", tc.peer).Replace(settingsDoc)
				cfg, err := config.Parse([]byte(doc))
				if err != nil {
					t.Errorf("%s %s: %v\n%s", tc.scope, line, err, doc)
					continue
				}
				for i, w := range []settings{tc.wantB, tc.wantC} {
					p := cfg.Peers[i]
					if got := healthSettings(p.Health); got != w.h {
						t.Errorf("%s %s: %s's monitor settings = %+v, want %+v", tc.scope, line, p.Name, got, w.h)
					}
					if got := failoverSettings(p.Health); got != w.f {
						t.Errorf("%s %s: %s's selector settings = %+v, want %+v", tc.scope, line, p.Name, got, w.f)
					}
				}
			}
		}
	}
	if n < 15 {
		t.Fatalf("only %d settings found: is the reflection walk broken?", n)
	}
}
