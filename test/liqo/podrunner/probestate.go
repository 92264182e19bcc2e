package podrunner

// ProbeState is a probe's result after its consecutive outcomes have met
// the thresholds: it turns true after successThreshold successes in a row
// and false after failureThreshold failures in a row.
type ProbeState struct {
	Result              bool
	successes, failures int32
}

// Observe returns the state after one outcome.
func (s ProbeState) Observe(ok bool, successThreshold, failureThreshold int32) ProbeState {
	successThreshold = max(successThreshold, 1)
	failureThreshold = max(failureThreshold, 1)
	if ok {
		s.failures = 0
		s.successes++
		if s.successes >= successThreshold {
			s.Result = true
		}
	} else {
		s.successes = 0
		s.failures++
		if s.failures >= failureThreshold {
			s.Result = false
		}
	}
	return s
}

// Failures is the number of failures in a row.
func (s ProbeState) Failures() int32 { return s.failures }
