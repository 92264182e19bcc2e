package wanem

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func TestParseRate(t *testing.T) {
	for _, c := range []struct {
		in   string
		want Rate
		str  string
	}{
		{"", 0, "0"}, {"0", 0, "0"}, {"100mbit", 100e6, "100mbit"}, {"1gbit", 1e9, "1gbit"},
		{"1.5Mbit", 1.5e6, "1500kbit"}, {"64000", 64000, "64kbit"}, {"123bit", 123, "123bit"},
	} {
		got, err := ParseRate(c.in)
		if err != nil || got != c.want {
			t.Errorf("ParseRate(%q) = %v, %v; want %v", c.in, uint64(got), err, uint64(c.want))
			continue
		}
		if got.String() != c.str {
			t.Errorf("Rate(%d).String() = %q, want %q", uint64(got), got.String(), c.str)
		}
	}
	for _, bad := range []string{"fast", "-1mbit", "mbit", "10 mbps"} {
		if _, err := ParseRate(bad); err == nil {
			t.Errorf("ParseRate(%q): no error", bad)
		}
	}
}

func TestSettingsJSONRoundTrip(t *testing.T) {
	s := Settings{Delay: Duration(10 * time.Millisecond), Jitter: Duration(time.Millisecond), Loss: 0.01,
		Burst: &GilbertElliott{P: 0.01, R: 0.3, LossBad: 1}, Rate: 100e6, Cut: true}
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"delay":"10ms"`) || !strings.Contains(string(b), `"rate":"100mbit"`) {
		t.Errorf("JSON %s: want durations and rates as text", b)
	}
	var back Settings
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if back.Delay != s.Delay || back.Jitter != s.Jitter || back.Rate != s.Rate || !back.Cut || *back.Burst != *s.Burst {
		t.Errorf("round trip: got %+v, want %+v", back, s)
	}
}

func TestValidate(t *testing.T) {
	ms := func(n int) Duration { return Duration(time.Duration(n) * time.Millisecond) }
	for _, c := range []struct {
		s    Settings
		want string // "" = valid
	}{
		{Settings{}, ""},
		{Settings{Delay: ms(10), Jitter: ms(10), Loss: 1}, ""},
		{Settings{Delay: ms(1), Jitter: ms(2)}, "jitter"},
		{Settings{Delay: ms(-1)}, "negative"},
		{Settings{Loss: 1.5}, "loss"},
		{Settings{Burst: &GilbertElliott{P: 0.1}}, "burst.r"},
		{Settings{Burst: &GilbertElliott{P: 0.1, R: 2}}, "burst.r 2"},
	} {
		err := c.s.Validate()
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%+v: unexpected %v", c.s, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%+v: error %v, want one containing %q", c.s, err, c.want)
		}
	}
}
