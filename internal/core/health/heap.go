package health

// pathHeap is a binary min-heap of paths ordered by wake, the next instant a
// path has time-driven work (a probe to send, a detection deadline, an
// outstanding probe to expire). Each path remembers its index so it can be
// re-keyed or removed in O(log n). Hand-written rather than container/heap
// to keep the hot loop free of interface calls.
type pathHeap []*path

func (h pathHeap) less(i, j int) bool { return h[i].wake.Before(h[j].wake) }

func (h pathHeap) swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].heapIdx = i
	h[j].heapIdx = j
}

func (h *pathHeap) push(p *path) {
	p.heapIdx = len(*h)
	*h = append(*h, p)
	h.up(p.heapIdx)
}

func (h *pathHeap) remove(p *path) {
	i, last := p.heapIdx, len(*h)-1
	if i != last {
		h.swap(i, last)
	}
	(*h)[last] = nil
	*h = (*h)[:last]
	p.heapIdx = -1
	if i != last {
		h.fix(i)
	}
}

// fix restores the order after the wake of the path at i changed.
func (h pathHeap) fix(i int) {
	if !h.down(i) {
		h.up(i)
	}
}

func (h pathHeap) up(i int) {
	for i > 0 {
		parent := (i - 1) / 2
		if !h.less(i, parent) {
			return
		}
		h.swap(i, parent)
		i = parent
	}
}

func (h pathHeap) down(i int) bool {
	start := i
	for {
		l := 2*i + 1
		if l >= len(h) {
			break
		}
		m := l
		if r := l + 1; r < len(h) && h.less(r, l) {
			m = r
		}
		if !h.less(m, i) {
			break
		}
		h.swap(i, m)
		i = m
	}
	return i > start
}
