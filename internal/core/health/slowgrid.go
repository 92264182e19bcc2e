package health

import "time"

// slowGrid is the probe grid (see probeGrid) of paths probed every
// slowGridFrom or slower: the up paths of idle peers (every 2 s at the
// defaults), which are most of the probes of a relay with many peers.
// With 1000 such paths, 100 ms gathers about 57 probes per wake where the
// 5 ms grid gathered about 3: 10 owner wakes per second instead of 200,
// and since the grid is aligned to absolute time, the peers' requests and
// the answers to ours arrive in bursts as well, which the Bind receives
// several at a time (docs/performance.md, scale-star). It takes at most 5 % off a 2 s
// interval (so intervals are 70-100 % of nominal, as at the 5 ms grid
// with 100 ms), which the detect time's DetectMultiplier probes absorb as
// they absorb the schedule jitter. A multiple of probeGrid, so every probe
// time stays on it.
const slowGrid = 20 * probeGrid

// slowGridFrom: intervals at least this long use slowGrid. At 2 s the
// 100 ms grid takes at most 5 % off an interval; at 1 s it would take 10 %
// (a 1 s interval down to 0.65 s with the schedule jitter), more than the
// 70-100 % documented.
const slowGridFrom = 2 * time.Second
