package collector

import (
	"context"
	"sync"
)

// need is how a background reader of ZFS waits for a collector to read
// it: the samplers and the snapshot lister run no command before then.
// The zero value is not ready: make one with newNeed.
type need struct {
	needed chan struct{} // closed by Need
	once   sync.Once
}

func newNeed() need { return need{needed: make(chan struct{})} }

// Need lets the reader start, if it has not.
func (n *need) Need() { n.once.Do(func() { close(n.needed) }) }

// waitNeeded waits for Need, and tells whether it came before ctx ended.
func (n *need) waitNeeded(ctx context.Context) bool {
	select {
	case <-ctx.Done():
		return false
	case <-n.needed:
		return true
	}
}
