package netstack

import (
	"fmt"

	"gvisor.dev/gvisor/pkg/tcpip"
	"gvisor.dev/gvisor/pkg/tcpip/stack"
	"gvisor.dev/gvisor/pkg/tcpip/transport/tcp"
)

// nsTuning is the set of stack knobs that matter for throughput. nsTuned is
// what New uses; nsUntuned is gVisor's defaults, kept so that the
// benchmark can show what the tuning buys (see netstack_bench_test.go).
type nsTuning struct {
	sack              bool
	congestion        string // "reno" or "cubic"
	rack              bool   // RACK loss detection (gVisor's default)
	sendBuf, recvBuf  tcpip.TCPSendBufferSizeRangeOption
	moderateRecvBuf   bool
	rxChecksumOffload bool
	queueLen          int // outbound packets buffered before the stack sees ENOBUFS
	forwarderRcvWnd   int // initial receive window of forwarded connections; 0 = gVisor default
}

var nsUntuned = nsTuning{
	congestion:      "reno",
	rack:            true,
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
	// No RACK: with this gVisor version, RACK (with SACK) recovers from
	// a burst loss - a path cut or a 200 ms blackhole under a bulk
	// transfer, a whole window lost - at a few segments a second, for
	// minutes: the connection is as good as hung. Seen in internal/agent's
	// TestFailoverDuringTransfer (2 of 6 runs crawled at ~5 KB/s) and with
	// a 200 ms blackhole on one path (4 of 8); without RACK, 18 of 18 and
	// 8 of 8 recovered within a second, through the retransmission timer.
	// The price is throughput under random loss, which RACK handles
	// better: BenchmarkNetstackTCP/tuned/lossy1pct ~90 MB/s with RACK,
	// ~17 MB/s without (about the untuned figure). A hang after every
	// failover is worse than a slower lossy link.
	rack: false,
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
	var rec tcpip.TCPRecovery
	if t.rack {
		rec = tcpip.TCPRACKLossDetection
	}
	for _, o := range []struct {
		name string
		opt  tcpip.SettableTransportProtocolOption
	}{
		{"SACK", &sack},
		{"congestion control", &cc},
		{"send buffer", &snd},
		{"receive buffer", &rcv},
		{"moderate receive buffer", &mod},
		{"loss recovery", &rec},
	} {
		if err := set(o.name, o.opt); err != nil {
			return err
		}
	}
	return nil
}
