package health

// replayWindow is how many nonces behind the newest one a request may still
// arrive and be accepted once. WireGuard keeps 2048 bits for data packets
// arriving out of order across cores; probes are sent a few per second per
// path, so 2048 covers minutes of reordering, far more than any real path.
const replayWindow = 2048

// retiredEpochs is how many superseded epochs of a peer are remembered and
// refused, so that an attacker replaying a recording from a recent boot
// cannot roll the filter back and replay that boot's requests. Eight boots
// of one peer within the lifetime of our process is already an outage.
const retiredEpochs = 8

const windowWords = replayWindow / 64

// ReplayFilter rejects replayed requests from one peer. Nonces are a
// per-sender counter that restarts with each epoch (boot), so the filter
// keeps a sliding bitmap per current epoch, like WireGuard's replay counter.
//
// Only requests need it: a reply is accepted only when its nonce matches an
// outstanding request of ours (Monitor.OnReply), and that match is consumed,
// so a replayed reply matches nothing. The filter is defence in depth: a
// replayed request could at worst make us send one reply, of the same size,
// that its apparent sender discards.
//
// The zero value is ready to use. A ReplayFilter is not safe for concurrent
// use; the shell keeps one per peer under that peer's lock.
type ReplayFilter struct {
	epoch   uint64
	started bool
	newest  uint64
	bits    [windowWords]uint64
	retired [retiredEpochs]uint64
	nRet    int // how many of retired are valid
	nextRet int // ring position of the next retired epoch
}

// Accept reports whether the authenticated request (epoch, nonce) is fresh,
// and records it. Call it only after PeerKey.Verify succeeded, so forged
// messages cannot move the window.
func (f *ReplayFilter) Accept(epoch, nonce uint64) bool {
	if !f.started || epoch != f.epoch {
		if f.isRetired(epoch) {
			return false
		}
		if f.started {
			f.retire(f.epoch)
		}
		f.started = true
		f.epoch = epoch
		f.newest = nonce
		f.bits = [windowWords]uint64{}
		f.set(nonce)
		return true
	}
	switch {
	case nonce > f.newest:
		f.slide(nonce)
		f.set(nonce)
		return true
	case f.newest-nonce >= replayWindow:
		return false // too old to tell
	case f.has(nonce):
		return false
	default:
		f.set(nonce)
		return true
	}
}

func (f *ReplayFilter) isRetired(epoch uint64) bool {
	for i := range f.nRet {
		if f.retired[i] == epoch {
			return true
		}
	}
	return false
}

func (f *ReplayFilter) retire(epoch uint64) {
	f.retired[f.nextRet] = epoch
	f.nextRet = (f.nextRet + 1) % retiredEpochs
	if f.nRet < retiredEpochs {
		f.nRet++
	}
}

// slide clears the bits of nonces f.newest+1..nonce, which are about to enter
// the window, and makes nonce the newest.
func (f *ReplayFilter) slide(nonce uint64) {
	if nonce-f.newest >= replayWindow {
		f.bits = [windowWords]uint64{}
	} else {
		for n := f.newest + 1; n <= nonce; {
			w := (n / 64) % windowWords
			if n%64 == 0 && nonce-n >= 63 {
				f.bits[w] = 0 // whole word at once
				n += 64
				continue
			}
			f.bits[w] &^= 1 << (n % 64)
			n++
		}
	}
	f.newest = nonce
}

func (f *ReplayFilter) set(n uint64) { f.bits[(n/64)%windowWords] |= 1 << (n % 64) }

func (f *ReplayFilter) has(n uint64) bool {
	return f.bits[(n/64)%windowWords]&(1<<(n%64)) != 0
}
