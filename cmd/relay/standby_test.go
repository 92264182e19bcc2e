package main

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const (
	passiveLabels = "networking.liqo.io/component=\"gateway\"\nnetworking.liqo.io/gateway-name=\"consumer-1\"\n"
	activeLabels  = passiveLabels + "networking.liqo.io/active=\"true\"\n"
)

// writeLabels replaces the labels file as the kubelet does (a new file
// renamed into place).
func writeLabels(t *testing.T, path, content string) {
	t.Helper()
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// TestStandbyUntilActive: a passive replica's relay waits, ready, and
// starts only when its pod carries networking.liqo.io/active=true.
func TestStandbyUntilActive(t *testing.T) {
	labels := filepath.Join(t.TempDir(), "labels")
	writeLabels(t, labels, passiveLabels)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	done := make(chan error, 1)
	go func() { done <- waitActive(context.Background(), labels, addr, log) }()

	// Ready while passive (retried until the server listens).
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get("http://" + addr + "/readyz")
		if err == nil {
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 || !strings.Contains(string(body), "standby") {
				t.Fatalf("/readyz in standby: %d %q", resp.StatusCode, body)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("standby /readyz never answered: %v", err)
		}
		time.Sleep(50 * time.Millisecond) // real: polls the relay process's /readyz
	}
	select {
	case err := <-done:
		t.Fatalf("waitActive returned %v while the pod is passive", err)
	default:
	}
	writeLabels(t, labels, activeLabels)
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("waitActive did not return after the pod became active")
	}
	// The standby server is gone: the relay takes the address.
	ln, err = net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("standby server still holds %s: %v", addr, err)
	}
	ln.Close()
}

// TestStandbyStopsOnDemotion: a running relay whose pod loses the active
// label is stopped; a missing labels file counts as passive.
func TestStandbyStopsOnDemotion(t *testing.T) {
	labels := filepath.Join(t.TempDir(), "labels")
	writeLabels(t, labels, activeLabels)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	if err := waitActive(context.Background(), labels, "", log); err != nil {
		t.Fatalf("active pod: %v", err)
	}
	demoted := make(chan struct{})
	go watchPassive(context.Background(), labels, log, func() { close(demoted) })
	writeLabels(t, labels, passiveLabels)
	select {
	case <-demoted:
	case <-time.After(30 * time.Second):
		t.Fatal("not stopped after the pod lost the active label")
	}
	if err := os.Remove(labels); err != nil {
		t.Fatal(err)
	}
	if ok, _ := podActive(labels); ok {
		t.Error("a missing labels file counts as active")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := waitActive(ctx, labels, "", log); err == nil {
		t.Error("waitActive with a missing file and an ended context returned nil")
	}
}
