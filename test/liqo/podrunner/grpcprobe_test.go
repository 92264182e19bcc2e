package podrunner

import (
	"context"
	"encoding/binary"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestGRPCHealthCodec(t *testing.T) {
	if got := grpcHealthRequest(""); string(got) != "\x00\x00\x00\x00\x00" {
		t.Errorf("empty request %q", got)
	}
	if got := grpcHealthRequest("ipam"); string(got) != "\x00\x00\x00\x00\x06\x0a\x04ipam" {
		t.Errorf("request %q", got)
	}
	for _, tc := range []struct {
		msg     string
		want    uint64
		wantErr string
	}{
		{msg: "\x00\x00\x00\x00\x02\x08\x01", want: 1},
		{msg: "\x00\x00\x00\x00\x00", want: 0},
		{msg: "\x00\x00\x00\x00\x05\x12\x01x\x08\x02", want: 2}, // an unknown string field first
		{msg: "\x01\x00\x00\x00\x00", wantErr: "compressed"},
		{msg: "\x00\x00\x00\x00\x09\x08", wantErr: "truncated"},
		{msg: "\x00\x00", wantErr: "of 2 bytes"},
	} {
		got, err := grpcHealthStatus([]byte(tc.msg))
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%q: err %v, want %q", tc.msg, err, tc.wantErr)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%q: %d, %v; want %d", tc.msg, got, err, tc.want)
		}
	}
}

// healthServer answers Health/Check over unencrypted HTTP/2 the way
// grpc-go does, with status for service "" and NOT_SERVING (2) for any
// other.
func healthServer(t *testing.T, status byte) (string, int) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var protos http.Protocols
	protos.SetUnencryptedHTTP2(true)
	srv := &http.Server{Protocols: &protos, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if r.URL.Path != grpcHealthPath || r.Header.Get("Content-Type") != "application/grpc" || r.ProtoMajor != 2 || len(body) < 5 {
			w.Header().Set("Grpc-Status", "12") // UNIMPLEMENTED, trailers-only
			w.WriteHeader(http.StatusOK)
			return
		}
		st := status
		if binary.BigEndian.Uint32(body[1:5]) != 0 {
			st = 2
		}
		w.Header().Set("Content-Type", "application/grpc")
		w.Header().Set("Trailer", "Grpc-Status")
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write([]byte{0, 0, 0, 0, 2, 0x08, st})
		w.Header().Set("Grpc-Status", "0")
	})}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve(ln)
	}()
	t.Cleanup(func() {
		_ = srv.Close()
		<-done
	})
	return "127.0.0.1", ln.Addr().(*net.TCPAddr).Port
}

func TestGRPCCheck(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	host, port := healthServer(t, grpcServing)
	if msg := grpcCheck(ctx, host, port, ""); msg != "" {
		t.Errorf("serving: %s", msg)
	}
	if msg := grpcCheck(ctx, host, port, "other"); !strings.Contains(msg, "status 2, not SERVING") {
		t.Errorf("another service: %q", msg)
	}
	host, port = healthServer(t, 0)
	if msg := grpcCheck(ctx, host, port, ""); !strings.Contains(msg, "status 0") {
		t.Errorf("unknown: %q", msg)
	}
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	closed := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	if msg := grpcCheck(ctx, host, closed, ""); !strings.Contains(msg, "connection refused") {
		t.Errorf("nothing listening: %q", msg)
	}
}
