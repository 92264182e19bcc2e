package version

import (
	"runtime/debug"
	"testing"
)

func TestInfo(t *testing.T) {
	stamp := &debug.BuildInfo{Settings: []debug.BuildSetting{
		{Key: "vcs", Value: "git"},
		{Key: "vcs.revision", Value: "fedcba9876543210fedcba9876543210fedcba98"},
		{Key: "vcs.time", Value: "2026-12-01T10:00:00Z"},
	}}
	for _, tc := range []struct {
		name               string
		commit, date       string
		bi                 *debug.BuildInfo
		wantCommit, wantAt string
	}{
		{"nothing set", "", "", nil, Unknown, Unknown},
		{"no VCS stamp", "", "", &debug.BuildInfo{}, Unknown, Unknown},
		{"linker", "0123456789abcdef0123456789abcdef01234567", "2026-12-03T17:21:58Z", nil,
			"0123456789abcdef0123456789abcdef01234567", "2026-12-03T17:21:58Z"},
		{"VCS stamp", "", "", stamp, "fedcba9876543210fedcba9876543210fedcba98", "2026-12-01T10:00:00Z"},
		{"linker wins over the stamp", "0123", "2026-12-03T17:21:58Z", stamp, "0123", "2026-12-03T17:21:58Z"},
		{"stamp fills what the linker left", "0123", "", stamp, "0123", "2026-12-01T10:00:00Z"},
	} {
		got := info("v1", tc.commit, tc.date, tc.bi)
		if got != (Info{Version: "v1", Commit: tc.wantCommit, BuildDate: tc.wantAt}) {
			t.Errorf("%s: %+v, want commit %q, date %q", tc.name, got, tc.wantCommit, tc.wantAt)
		}
	}
}

func TestStringPrefersTheLinker(t *testing.T) {
	old := Version
	t.Cleanup(func() { Version = old })
	Version = "1.2.3"
	if got := String(); got != "1.2.3" {
		t.Errorf("String() = %q, want the linker's 1.2.3", got)
	}
	if got := Get().Version; got != "1.2.3" {
		t.Errorf("Get().Version = %q, want 1.2.3", got)
	}
}
