package e2e

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"slices"
	"time"
)

// Samples is what a Stream recorded: per sequence number, when the
// datagram was sent and when its echo came back (zero if it never did).
type Samples struct {
	Sent, Recv []time.Time
	Interval   time.Duration
	WriteErrs  int
	// FirstWriteErr is the first send error; Failed holds the sequence
	// numbers whose send failed.
	FirstWriteErr error
	Failed        map[uint64]bool
}

// Cycle is one cut of a path and its restore.
type Cycle struct {
	Cut, Restore time.Time
}

// cutLead opens a cut's window a little before the cut, so that datagrams
// in flight when the path went away count as lost in that cut, not in the
// failback before it. Far above any RTT in the namespaces, far below the
// time between a failback and the next cut.
const cutLead = 500 * time.Millisecond

// CutResult is the stream's view of one cycle, plus what relay A's event
// log said about it (SwitchMs, FailbackMs; -1 when no event was found).
type CutResult struct {
	Index int       `json:"index"`
	CutAt time.Time `json:"cutAt"`
	// InterruptionMs is the longest silence of the echoes around the cut,
	// less one sending interval (a stream that loses nothing scores ~0).
	InterruptionMs float64 `json:"interruptionMs"`
	// Lost counts the datagrams sent from cutLead before the cut until the
	// restore that were never echoed.
	Lost int `json:"lost"`
	// The same after the restore (failing back), until the next cut's
	// window opens or the stream ends.
	FailbackInterruptionMs float64 `json:"failbackInterruptionMs"`
	FailbackLost           int     `json:"failbackLost"`
	// SwitchMs: from the cut to relay A's switch to the consumer path;
	// FailbackMs: from the restore to its switch back to direct.
	SwitchMs   float64 `json:"switchMs"`
	FailbackMs float64 `json:"failbackMs"`
	// PeerSwitchMs: from the cut to relay B's switch (the echoes need
	// both relays on the consumer path).
	PeerSwitchMs float64 `json:"peerSwitchMs"`
}

// Analyze splits the samples into one cut window and one failback window
// per cycle and measures each. Windows end at the next cut's window, and
// the last at end; cycles must be in order.
func Analyze(s Samples, cycles []Cycle, end time.Time) []CutResult {
	arrivals := arrivalsSorted(s)
	out := make([]CutResult, len(cycles))
	for i, c := range cycles {
		hi := end
		if i+1 < len(cycles) {
			hi = cycles[i+1].Cut.Add(-cutLead)
		}
		out[i] = CutResult{
			Index:                  i + 1,
			CutAt:                  c.Cut,
			InterruptionMs:         ms(longestGap(arrivals, c.Cut, c.Restore, s.Interval)),
			Lost:                   lost(s, c.Cut.Add(-cutLead), c.Restore),
			FailbackInterruptionMs: ms(longestGap(arrivals, c.Restore, hi, s.Interval)),
			FailbackLost:           lost(s, c.Restore, hi),
			SwitchMs:               -1,
			FailbackMs:             -1,
			PeerSwitchMs:           -1,
		}
	}
	return out
}

// Baseline is the longest silence (less one interval) before the first
// cut's window: the noise floor of the machine, to read the cuts against.
func Baseline(s Samples, firstCut time.Time) float64 {
	arr := arrivalsSorted(s)
	var lo time.Time
	if len(arr) > 0 {
		lo = arr[0]
	}
	return ms(longestGap(arr, lo, firstCut.Add(-cutLead), s.Interval))
}

// arrivalsSorted returns the echo arrival times in order.
func arrivalsSorted(s Samples) []time.Time {
	var arr []time.Time
	for _, r := range s.Recv {
		if !r.IsZero() {
			arr = append(arr, r)
		}
	}
	slices.SortFunc(arr, func(a, b time.Time) int { return a.Compare(b) })
	return arr
}

// longestGap is the longest time between consecutive arrivals where the
// silence overlaps [lo, hi), less interval, never negative.
func longestGap(arr []time.Time, lo, hi time.Time, interval time.Duration) time.Duration {
	var worst time.Duration
	for k := 0; k+1 < len(arr); k++ {
		if !arr[k+1].After(lo) || !arr[k].Before(hi) {
			continue
		}
		if g := arr[k+1].Sub(arr[k]) - interval; g > worst {
			worst = g
		}
	}
	return worst
}

// lost counts datagrams sent in [lo, hi) that were never echoed.
func lost(s Samples, lo, hi time.Time) int {
	n := 0
	for i, t := range s.Sent {
		if !t.Before(lo) && t.Before(hi) && s.Recv[i].IsZero() {
			n++
		}
	}
	return n
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// Summary is the median, p95 (nearest rank: with ten cuts, the largest)
// and max of a set of figures.
type Summary struct {
	Median float64 `json:"median"`
	P95    float64 `json:"p95"`
	Max    float64 `json:"max"`
}

// Summarize computes a Summary; zero for no values.
func Summarize(v []float64) Summary {
	if len(v) == 0 {
		return Summary{}
	}
	s := slices.Clone(v)
	slices.Sort(s)
	return Summary{Median: nearestRank(s, 0.5), P95: nearestRank(s, 0.95), Max: s[len(s)-1]}
}

// nearestRank is the p-quantile of sorted values by the nearest-rank
// method: the smallest value with at least p of the values at or below it.
func nearestRank(sorted []float64, p float64) float64 {
	i := int(math.Ceil(p*float64(len(sorted)))) - 1
	return sorted[max(i, 0)]
}

// FailoverResults is the JSON written to $RELAY_E2E_RESULTS.
type FailoverResults struct {
	Test         string  `json:"test"`
	IntervalMs   float64 `json:"intervalMs"`
	Cut          string  `json:"cut"`        // how the path was cut
	Health       string  `json:"health"`     // relay health settings ("" = defaults)
	BaselineMs   float64 `json:"baselineMs"` // longest silence before the first cut
	Interruption Summary `json:"interruptionMs"`
	Lost         Summary `json:"lostPerCut"`
	Switch       Summary `json:"switchMs"`
	PeerSwitch   Summary `json:"peerSwitchMs"`
	Failback     Summary `json:"failbackMs"`
	Sent         int     `json:"sent"`
	WriteErrors  int     `json:"writeErrors"`
	// UnexpectedSwitches counts relay A's switches that no cut or restore
	// explains; Dampened its switches for reason `dampened`.
	UnexpectedSwitches int         `json:"unexpectedSwitches"`
	Dampened           int         `json:"dampened"`
	Cuts               []CutResult `json:"cuts"`
}

// resultsEnv names the file the failover results go to, if set.
const resultsEnv = "RELAY_E2E_RESULTS"

// writeResults writes r as JSON to the file named by $RELAY_E2E_RESULTS;
// it does nothing when the variable is unset.
func writeResults(r FailoverResults) (string, error) {
	path := os.Getenv(resultsEnv)
	if path == "" {
		return "", nil
	}
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return "", fmt.Errorf("encode results: %w", err)
	}
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		return "", fmt.Errorf("write %s: %w", path, err)
	}
	return path, nil
}
