package admin_test

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/liqo-relay/relay/internal/control/admin"
	"github.com/liqo-relay/relay/internal/core/status"
)

func TestRenderTableGolden(t *testing.T) {
	for _, tc := range []struct {
		file  string
		color bool
	}{
		{"status_table.golden", false},
		{"status_table_color.golden", true},
	} {
		t.Run(tc.file, func(t *testing.T) {
			var b bytes.Buffer
			admin.RenderTable(&b, sampleStatus(), now, tc.color)
			golden(t, tc.file, b.Bytes())
		})
	}
}

func TestRenderTableColorOnlyWhenAsked(t *testing.T) {
	var plain, color bytes.Buffer
	admin.RenderTable(&plain, sampleStatus(), now, false)
	admin.RenderTable(&color, sampleStatus(), now, true)
	if strings.Contains(plain.String(), "\x1b[") {
		t.Error("plain output contains escape sequences")
	}
	for _, want := range []string{
		"\x1b[32mup\x1b[0m", "\x1b[31mdown\x1b[0m", "\x1b[33mdampened\x1b[0m",
		"\x1b[32mreachable\x1b[0m", "\x1b[31mUNREACHABLE\x1b[0m",
	} {
		if !strings.Contains(color.String(), want) {
			t.Errorf("coloured output lacks %q", want)
		}
	}
	// Stripping the escapes gives the plain table back: colour does not
	// move any column.
	stripped := color.String()
	for _, esc := range []string{"\x1b[32m", "\x1b[31m", "\x1b[33m", "\x1b[0m"} {
		stripped = strings.ReplaceAll(stripped, esc, "")
	}
	if stripped != plain.String() {
		t.Errorf("coloured table without escapes differs from the plain one:\n%s\nvs\n%s", stripped, plain.String())
	}
}

func TestRenderTableEmpty(t *testing.T) {
	var b bytes.Buffer
	admin.RenderTable(&b, status.Status{}, now, false)
	want := "-  mode -  version -  uptime 0s  config generation 0\n" +
		"public key -  listen port 0\n\nno peers configured\n"
	if b.String() != want {
		t.Errorf("got\n%q\nwant\n%q", b.String(), want)
	}
}

func TestRenderTableAges(t *testing.T) {
	for _, tc := range []struct {
		d    time.Duration
		want string
	}{
		{-5 * time.Second, "0s ago"}, // clock skew
		{0, "0s ago"},
		{59*time.Second + 999*time.Millisecond, "59s ago"},
		{time.Minute, "1m0s ago"},
		{3*time.Minute + 12*time.Second, "3m12s ago"},
		{5*time.Hour + 7*time.Minute + 59*time.Second, "5h7m ago"},
		{50 * time.Hour, "2d2h ago"},
	} {
		st := status.Status{Peers: []status.PeerStatus{{Name: "b", Paths: []status.PathStatus{
			{Name: "direct", State: status.PathUp, LastChange: status.At(now.Add(-tc.d))},
		}}}}
		var b bytes.Buffer
		admin.RenderTable(&b, st, now, false)
		if !strings.Contains(b.String(), " "+tc.want+"\n") {
			t.Errorf("age %v: output lacks %q:\n%s", tc.d, tc.want, b.String())
		}
	}
}

func TestRenderPing(t *testing.T) {
	var b bytes.Buffer
	admin.RenderPing(&b, "provider-b", []status.PingResult{
		{Path: "direct", RTTMs: 10.14, OK: true},
		{Path: "consumer", Error: "no answer within 1s"},
		{Path: "backup-link", RTTMs: 0.25, OK: true},
		{Path: "x"},
	})
	want := "" +
		"ping provider-b\n" +
		"  direct       10.1ms  ok\n" +
		"  consumer     -       no answer within 1s\n" +
		"  backup-link  0.25ms  ok\n" +
		"  x            -       failed\n"
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}

	b.Reset()
	admin.RenderPing(&b, "provider-c", nil)
	if got, want := b.String(), "ping provider-c\n  no paths\n"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestRenderTablePeerWithoutPaths(t *testing.T) {
	st := status.Status{Peers: []status.PeerStatus{
		{Name: "b"},
		{Name: "c", ActivePath: "direct", Reachable: true, Paths: []status.PathStatus{{Name: "direct", State: status.PathUp}}},
	}}
	var b bytes.Buffer
	admin.RenderTable(&b, st, now, false)
	for _, want := range []string{
		"peer b  UNREACHABLE  active -  prefixes -  handshake never  rx 0 B  tx 0 B\n  no paths\n",
		"  *  direct  -         up     0.00ms  0.00ms  0%    -\n",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, b.String())
		}
	}
}
