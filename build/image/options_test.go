package image

import (
	"strings"
	"testing"
	"time"
)

// TestOptionsRejected checks that bad build options are refused before
// anything is compiled, each with a message naming what is wrong.
func TestOptionsRejected(t *testing.T) {
	good := Options{
		Meta:       Meta{Version: "v1.2.3-4-gabcdef", Revision: "abc", Created: time.Unix(1, 0)},
		Repository: Repository, Platforms: Platforms(), ModuleDir: ".", OutDir: "out", Go: "go",
	}
	if err := good.check(); err != nil {
		t.Fatalf("good options: %v", err)
	}
	for _, tc := range []struct {
		name   string
		change func(*Options)
		want   string
	}{
		{"space in version", func(o *Options) { o.Version = "1.0 beta" }, `version "1.0 beta": must be a valid image tag`},
		{"empty version", func(o *Options) { o.Version = "" }, `version "": must be a valid image tag`},
		{"leading dot", func(o *Options) { o.Version = ".1" }, `version ".1"`},
		{"no revision", func(o *Options) { o.Revision = "" }, "revision: empty"},
		{"no time", func(o *Options) { o.Created = time.Time{} }, "created: not set (SOURCE_DATE_EPOCH)"},
		{"no platform", func(o *Options) { o.Platforms = nil }, "platforms: none"},
		{"no out dir", func(o *Options) { o.OutDir = "" }, "output dir"},
	} {
		o := good
		tc.change(&o)
		if err := o.check(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want an error containing %q", tc.name, err, tc.want)
		}
		if _, err := Build(t.Context(), o, nil); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: Build: got %v, want an error containing %q", tc.name, err, tc.want)
		}
	}
}

func TestEpochTime(t *testing.T) {
	got, err := EpochTime("1700000000")
	if err != nil || !got.Equal(time.Unix(1700000000, 0)) || got.Location() != time.UTC {
		t.Errorf("EpochTime(1700000000) = %v, %v", got, err)
	}
	for _, bad := range []string{"", "0", "-5", "12abc", " 12", "1.5"} {
		if _, err := EpochTime(bad); err == nil || !strings.Contains(err.Error(), "SOURCE_DATE_EPOCH") {
			t.Errorf("EpochTime(%q): got %v, want an error naming SOURCE_DATE_EPOCH", bad, err)
		}
	}
}

func TestParsePlatforms(t *testing.T) {
	ps, err := ParsePlatforms([]string{"linux/amd64", "linux/arm64"})
	if err != nil || len(ps) != 2 || platformKey(ps[0]) != "linux/amd64" || platformKey(ps[1]) != "linux/arm64" {
		t.Errorf("got %v, %v", ps, err)
	}
	for _, tc := range []struct {
		in   []string
		want string
	}{
		{[]string{"windows/amd64"}, `platform "windows/amd64": want linux/ARCH`},
		{[]string{"linux/arm/v7"}, `platform "linux/arm/v7": want linux/ARCH`},
		{[]string{"linux/amd64", "linux/amd64"}, "listed twice"},
		{[]string{""}, `platform ""`},
		{nil, "no platform"},
	} {
		if _, err := ParsePlatforms(tc.in); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParsePlatforms(%q): got %v, want %q", tc.in, err, tc.want)
		}
	}
}
