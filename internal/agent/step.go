package agent

import (
	"time"

	"github.com/liqo-relay/relay/internal/control/metrics"
	"github.com/liqo-relay/relay/internal/core/engine"
	"github.com/liqo-relay/relay/internal/core/failover"
)

// step runs the engine up to now and carries out what it decides: replies
// queued for this wake are handled (replyq.go), then the engine's tick
// sends the probes that are due, takes path transitions and moves
// traffic. Last, it records when the owner will wake next.
func (a *Agent) step(now time.Time) {
	a.takeLazy()
	// At the end of the step, as Run arms its timer then.
	defer func() { a.planWake(a.clock.Now()) }()
	a.carryOut(a.eng.Step(now, engine.Tick{}))
}

// housekeep runs every housekeepingInterval: the Bind's counters go to
// the engine (passive evidence, idleness, deferred handshakes, holds), and
// byte counters, probe loss and gauges to the metrics.
func (a *Agent) housekeep(now time.Time) {
	h := engine.Housekeep{Peers: a.trafficBuf[:0]}
	a.engSrc = a.engSrc[:0]
	for _, p := range a.cfg.Peers { // in configuration order: the engine's outputs come in it
		name := p.Name
		st, ok := a.peers[name]
		if !ok {
			continue
		}
		// One Bind lookup per peer and round, into one buffer: with many
		// peers this loop is most of the round.
		c, _ := a.dp.paths.Counters(name, a.srcBuf)
		a.srcBuf = c.Sources
		var rxBytes uint64
		from := len(a.engSrc)
		for _, src := range c.Sources {
			rxBytes += src.Bytes
			a.engSrc = append(a.engSrc, engine.Source{Addr: src.Addr, Packets: src.Packets})
		}
		h.Peers = append(h.Peers, engine.Traffic{Peer: name, Sources: a.engSrc[from:len(a.engSrc):len(a.engSrc)], TxData: c.TxData})
		a.publishPeerBytes(st, rxBytes, c.TxBytes)
		if mode := st.cfg.Health.Redundancy; mode != "" && mode != failover.RedundancyOff {
			if pk, by := a.dp.paths.Redundant(name); pk > 0 {
				a.metrics.Redundant(name, pk, by)
			}
		}
	}
	a.trafficBuf = h.Peers
	a.carryOut(a.eng.Step(now, h))
	a.publishDNSView()
	a.publishPathStats()
	c := a.dp.pipe.Counters()
	a.metrics.Pipeline(metrics.PipelineCounters{
		DroppedBadSource:      c.DroppedBadSource,
		DroppedBadDestination: c.DroppedBadDest,
		DroppedMalformed:      c.DroppedMalformed,
		TranslatedRX:          c.TranslatedRX,
		TranslatedTX:          c.TranslatedTX,
		MSSClamped:            c.MSSClamped,
	})
}

// checkRules repairs our policy rules and routes if another agent removed
// them or put rules ahead of ours.
func (a *Agent) checkRules() {
	if a.dp.routes == nil {
		return
	}
	repaired, err := a.dp.routes.EnsureRules()
	if err != nil {
		a.log.Error("checking policy rules", "err", err)
		return
	}
	if repaired {
		a.log.Warn("policy rules or routes were changed by someone else: restored")
	}
}
