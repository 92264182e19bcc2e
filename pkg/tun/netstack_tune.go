package tun

import (
	"fmt"

	"gvisor.dev/gvisor/pkg/tcpip"
	"gvisor.dev/gvisor/pkg/tcpip/stack"
	"gvisor.dev/gvisor/pkg/tcpip/transport/tcp"
)

// nsTuning is the set of stack knobs that matter for throughput. nsTuned is
// what NewNetstack uses; nsUntuned is gVisor's defaults, kept so that the
// benchmark can show what the tuning buys (see netstack_bench_test.go).
type nsTuning struct {
	sack              bool
	congestion        string // "reno" or "cubic"
	sendBuf, recvBuf  tcpip.TCPSendBufferSizeRangeOption
	moderateRecvBuf   bool
	rxChecksumOffload bool
	queueLen          int // outbound packets buffered before the stack sees ENOBUFS
	forwarderRcvWnd   int // initial receive window of forwarded connections; 0 = gVisor default
}

var nsUntuned = nsTuning{
	congestion:      "reno",
	sendBuf:         tcpip.TCPSendBufferSizeRangeOption{Min: tcp.MinBufferSize, Default: tcp.DefaultSendBufferSize, Max: tcp.MaxBufferSize},
	recvBuf:         tcpip.TCPSendBufferSizeRangeOption{Min: tcp.MinBufferSize, Default: tcp.DefaultReceiveBufferSize, Max: tcp.MaxBufferSize},
	moderateRecvBuf: false,
	queueLen:        1024,
}

var nsTuned = nsTuning{
	// SACK recovers several losses per window without a timeout; gVisor
	// leaves it off by default.
	sack: true,
	// Reno, not cubic: with this gVisor version, cubic together with SACK
	// stalls a bulk transfer for good after a few losses (seen in
	// BenchmarkNetstackTCP/*/lossy1pct: ~260 segments, then no progress and
	// no retransmission timeout). Reno+SACK recovers quickly.
	congestion: "reno",
	// Let windows grow to 8 MiB (gVisor stops at 4 MiB): enough for
	// ~650 Mbit/s at 100 ms RTT per flow.
	sendBuf: tcpip.TCPSendBufferSizeRangeOption{Min: tcp.MinBufferSize, Default: 1 << 20, Max: 8 << 20},
	recvBuf: tcpip.TCPSendBufferSizeRangeOption{Min: tcp.MinBufferSize, Default: 1 << 20, Max: 8 << 20},
	// Auto-tune the receive buffer so idle flows do not pin the maximum.
	moderateRecvBuf: true,
	// Inbound packets come from WireGuard, already authenticated.
	rxChecksumOffload: true,
	queueLen:          4096,
	forwarderRcvWnd:   1 << 20,
}

func (t nsTuning) apply(s *stack.Stack) error {
	set := func(name string, opt tcpip.SettableTransportProtocolOption) error {
		if err := s.SetTransportProtocolOption(tcp.ProtocolNumber, opt); err != nil {
			return fmt.Errorf("netstack: tcp option %s: %s", name, err)
		}
		return nil
	}
	sack := tcpip.TCPSACKEnabled(t.sack)
	cc := tcpip.CongestionControlOption(t.congestion)
	snd := t.sendBuf
	rcv := tcpip.TCPReceiveBufferSizeRangeOption(t.recvBuf)
	mod := tcpip.TCPModerateReceiveBufferOption(t.moderateRecvBuf)
	for _, o := range []struct {
		name string
		opt  tcpip.SettableTransportProtocolOption
	}{
		{"SACK", &sack},
		{"congestion control", &cc},
		{"send buffer", &snd},
		{"receive buffer", &rcv},
		{"moderate receive buffer", &mod},
	} {
		if err := set(o.name, o.opt); err != nil {
			return err
		}
	}
	return nil
}
