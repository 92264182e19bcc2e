package podrunner

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
)

// The gRPC health checking protocol (grpc.health.v1.Health/Check), spoken
// over the standard library's unencrypted HTTP/2 with hand-made protobuf:
// a probe needs one unary call, not a gRPC stack.
const (
	grpcHealthPath = "/grpc.health.v1.Health/Check"
	// grpcServing is HealthCheckResponse.ServingStatus SERVING.
	grpcServing = 1
)

// grpcHealthRequest encodes a HealthCheckRequest{service} as a gRPC
// message: a flag byte (not compressed), a 4-byte length, the protobuf.
func grpcHealthRequest(service string) []byte {
	var pb []byte
	if service != "" {
		pb = append(pb, 0x0a) // field 1, length-delimited
		pb = binary.AppendUvarint(pb, uint64(len(service)))
		pb = append(pb, service...)
	}
	msg := make([]byte, 5, 5+len(pb))
	binary.BigEndian.PutUint32(msg[1:], uint32(len(pb)))
	return append(msg, pb...)
}

// grpcHealthStatus decodes the status of a HealthCheckResponse gRPC
// message (0, UNKNOWN, when the field is absent).
func grpcHealthStatus(msg []byte) (uint64, error) {
	if len(msg) < 5 {
		return 0, fmt.Errorf("gRPC message of %d bytes", len(msg))
	}
	if msg[0] != 0 {
		return 0, errors.New("compressed gRPC message")
	}
	n := binary.BigEndian.Uint32(msg[1:5])
	pb := msg[5:]
	if uint32(len(pb)) < n {
		return 0, fmt.Errorf("gRPC message truncated: %d of %d bytes", len(pb), n)
	}
	pb = pb[:n]
	var status uint64
	for len(pb) > 0 {
		key, k := binary.Uvarint(pb)
		if k <= 0 {
			return 0, errors.New("bad protobuf key")
		}
		pb = pb[k:]
		switch key & 7 {
		case 0: // varint
			v, k := binary.Uvarint(pb)
			if k <= 0 {
				return 0, errors.New("bad protobuf varint")
			}
			pb = pb[k:]
			if key>>3 == 1 {
				status = v
			}
		case 2: // length-delimited
			l, k := binary.Uvarint(pb)
			if k <= 0 || uint64(len(pb)-k) < l {
				return 0, errors.New("bad protobuf length")
			}
			pb = pb[k+int(l):]
		default:
			return 0, fmt.Errorf("unexpected protobuf wire type %d", key&7)
		}
	}
	return status, nil
}

// grpcCheck calls Health/Check at host:port for service and returns "" when
// the answer is SERVING, else why not.
func grpcCheck(ctx context.Context, host string, port int, service string) string {
	addr := net.JoinHostPort(host, strconv.Itoa(port))
	var protos http.Protocols
	protos.SetUnencryptedHTTP2(true)
	tr := &http.Transport{Protocols: &protos, DisableKeepAlives: true}
	defer tr.CloseIdleConnections()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+addr+grpcHealthPath, bytes.NewReader(grpcHealthRequest(service)))
	if err != nil {
		return err.Error()
	}
	req.Header.Set("Content-Type", "application/grpc")
	req.Header.Set("TE", "trailers")
	req.Header.Set("User-Agent", "kube-probe/podrunner")
	resp, err := tr.RoundTrip(req)
	if err != nil {
		return fmt.Sprintf("gRPC health check of %s: %v", addr, err)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
	resp.Body.Close()
	if err != nil {
		return fmt.Sprintf("gRPC health check of %s: %v", addr, err)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Sprintf("gRPC health check of %s: HTTP status %d", addr, resp.StatusCode)
	}
	// A trailers-only answer carries grpc-status in the headers.
	code := resp.Trailer.Get("Grpc-Status")
	if code == "" {
		code = resp.Header.Get("Grpc-Status")
	}
	if code != "0" {
		msg := resp.Trailer.Get("Grpc-Message") + resp.Header.Get("Grpc-Message")
		return fmt.Sprintf("gRPC health check of %s: grpc-status %q %s", addr, code, msg)
	}
	status, err := grpcHealthStatus(body)
	if err != nil {
		return fmt.Sprintf("gRPC health check of %s: %v", addr, err)
	}
	if status != grpcServing {
		return fmt.Sprintf("gRPC health check of %s: status %d, not SERVING", addr, status)
	}
	return ""
}
