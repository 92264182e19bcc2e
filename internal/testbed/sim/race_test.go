//go:build race

package sim_test

// raceEnabled shortens the simulated-mesh runs under the race detector,
// which slows them ~10x without finding more in the extra seeds.
const raceEnabled = true
