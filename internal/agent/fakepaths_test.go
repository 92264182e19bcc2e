package agent_test

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/liqo-relay/relay/internal/agent"
	"github.com/liqo-relay/relay/internal/dataplane/conn/multipath"
)

// pathLog is a fake of the Bind's path table: it passes every call on to
// the real Bind and keeps each peer's paths as the last SetPeer gave them,
// so that a test can compare what the Bind was told with what it expects.
type pathLog struct {
	agent.Paths

	mu    sync.Mutex
	peers map[string][]multipath.Path
}

func newPathLog(inner agent.Paths) *pathLog {
	return &pathLog{Paths: inner, peers: map[string][]multipath.Path{}}
}

func (l *pathLog) SetPeer(name string, paths []multipath.Path) {
	l.mu.Lock()
	l.peers[name] = slices.Clone(paths)
	l.mu.Unlock()
	l.Paths.SetPeer(name, paths)
}

func (l *pathLog) RemovePeer(name string) {
	l.mu.Lock()
	delete(l.peers, name)
	l.mu.Unlock()
	l.Paths.RemovePeer(name)
}

// String is one line per peer, sorted: its name and each path's name and
// address, in the Bind's order.
func (l *pathLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var b strings.Builder
	for _, name := range slices.Sorted(maps.Keys(l.peers)) {
		fmt.Fprintf(&b, "%s:", name)
		for _, p := range l.peers[name] {
			fmt.Fprintf(&b, " %s=%s", p.Name, p.Addr)
		}
		b.WriteString("\n")
	}
	return b.String()
}
