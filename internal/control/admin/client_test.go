package admin_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"syscall"
	"testing"

	"github.com/liqo-relay/relay/internal/control/admin"
	"github.com/liqo-relay/relay/internal/control/admin/admintest"
	"github.com/liqo-relay/relay/internal/core/status"
)

// testServer serves src over loopback HTTP for the client tests.
func testServer(t *testing.T, src admin.Source) string {
	t.Helper()
	ts := httptest.NewServer(admin.NewServer("", src, nil, nil).Handler())
	t.Cleanup(ts.Close)
	return strings.TrimPrefix(ts.URL, "http://")
}

// closedPort returns a loopback address where nothing listens.
func closedPort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

func TestFetchStatus(t *testing.T) {
	src := &admintest.Source{}
	want := sampleStatus()
	src.SetStatus(want)
	addr := testServer(t, src)

	for _, a := range []string{addr, "http://" + addr} {
		got, err := admin.FetchStatus(context.Background(), a)
		if err != nil {
			t.Fatalf("FetchStatus(%s): %v", a, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("FetchStatus(%s) =\n%+v\nwant\n%+v", a, got, want)
		}
	}
}

func TestFetchStatusNothingListening(t *testing.T) {
	addr := closedPort(t)
	_, err := admin.FetchStatus(context.Background(), addr)
	if err == nil {
		t.Fatal("no error")
	}
	if got, want := err.Error(), "no relay answering on "+addr+": is it running? (--admin)"; got != want {
		t.Errorf("error %q, want %q", got, want)
	}
	if !errors.Is(err, admin.ErrNoRelay) || !errors.Is(err, syscall.ECONNREFUSED) {
		t.Errorf("error %v wraps neither ErrNoRelay nor ECONNREFUSED", err)
	}

	if _, err := admin.FetchPing(context.Background(), addr, "b"); !errors.Is(err, admin.ErrNoRelay) {
		t.Errorf("FetchPing: %v, want ErrNoRelay", err)
	}
}

func TestFetchStatusErrors(t *testing.T) {
	for _, tc := range []struct {
		name    string
		handler http.HandlerFunc
		want    string
	}{
		{"server error", func(w http.ResponseWriter, _ *http.Request) {
			http.Error(w, "agent not started", http.StatusInternalServerError)
		}, "/status 500 Internal Server Error: agent not started"},
		{"not json", func(w http.ResponseWriter, _ *http.Request) {
			w.Write([]byte("<html>"))
		}, "decoding status from"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ts := httptest.NewServer(tc.handler)
			defer ts.Close()
			_, err := admin.FetchStatus(context.Background(), ts.URL)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want it to contain %q", err, tc.want)
			}
		})
	}

	if _, err := admin.FetchStatus(context.Background(), "http://"); err == nil || !strings.Contains(err.Error(), "want host:port") {
		t.Errorf("empty host: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := admin.FetchStatus(ctx, closedPort(t)); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled context: %v, want context.Canceled", err)
	}
}

func TestFetchPing(t *testing.T) {
	src := &admintest.Source{}
	want := []status.PingResult{
		{Path: "direct", RTTMs: 10.1, OK: true},
		{Path: "consumer", Error: "timeout"},
	}
	src.SetPing("provider b", want) // a space survives query encoding
	addr := testServer(t, src)

	got, err := admin.FetchPing(context.Background(), addr, "provider b")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("FetchPing = %+v, want %+v", got, want)
	}

	_, err = admin.FetchPing(context.Background(), addr, "nobody")
	if !errors.Is(err, admin.ErrUnknownPeer) {
		t.Errorf("unknown peer: %v, want ErrUnknownPeer", err)
	}
	if err == nil || !strings.Contains(err.Error(), `"nobody"`) {
		t.Errorf("unknown peer error %v does not name the peer", err)
	}

	src.SetPingError(errors.New("probe socket closed"))
	_, err = admin.FetchPing(context.Background(), addr, "provider b")
	if err == nil || !strings.Contains(err.Error(), "500 Internal Server Error: probe socket closed") {
		t.Errorf("ping failure: %v", err)
	}
}

// A relay without /ping answers a plain 404; that is not an unknown peer.
func TestFetchPingOldRelay(t *testing.T) {
	ts := httptest.NewServer(http.NotFoundHandler())
	defer ts.Close()
	_, err := admin.FetchPing(context.Background(), ts.URL, "b")
	if err == nil || errors.Is(err, admin.ErrUnknownPeer) || !strings.Contains(err.Error(), "404") {
		t.Errorf("error %v, want a plain 404 error", err)
	}
}
