package zfs

import "context"

// PoolStatesRead is a read of each pool's state from the kernel's kstats,
// which needs no zpool process: pool health when zpool status fails (a
// suspended pool can hang zpool in the kernel).
type PoolStatesRead struct {
	client *Client
	early  <-chan poolStates // nil: not started
}

type poolStates struct {
	states map[string]string
	err    error
}

// KstatPoolStates prepares a read of the pool states for when zpool status
// fails. Where that costs only file reads (Linux procfs) it starts at
// once, beside zpool status: a zpool that hangs until the deadline, on a
// machine too busy to give the fallback its reserved time afterwards, then
// finds them read already. Where the kstats come from a command, nothing
// runs before Wait.
func (c *Client) KstatPoolStates(ctx context.Context) *PoolStatesRead {
	r := &PoolStatesRead{client: c}
	reader, ok := c.kstatReader().(procfsKstats)
	if !ok {
		return r
	}
	early := make(chan poolStates, 1)
	go func() {
		states, err := reader.poolStates(ctx)
		early <- poolStates{states, err}
	}()
	r.early = early
	return r
}

// Wait returns each pool's state: the read started early, as soon as it is
// done even past the deadline, or a read now while there is time. It
// returns nothing when the host has no state kstats or ctx ended first.
// Unless the kstats know no pool, the read counts in the freshness of
// kstat_pool_state.
func (r *PoolStatesRead) Wait(ctx context.Context) (map[string]string, error) {
	got, ok := r.await(ctx)
	if !ok || (got.err == nil && len(got.states) == 0) {
		return nil, nil
	}
	r.client.record(SourceKstatState, got.err)
	return got.states, got.err
}

func (r *PoolStatesRead) await(ctx context.Context) (poolStates, bool) {
	if r.early != nil {
		select {
		case got := <-r.early:
			return got, true
		default:
		}
		select {
		case got := <-r.early:
			return got, true
		case <-ctx.Done():
			return poolStates{}, false
		}
	}
	reader := r.client.kstatReader()
	if reader == nil || ctx.Err() != nil {
		return poolStates{}, false // zpool commands leave time for this: see Client.zpool
	}
	states, err := reader.poolStates(ctx)
	return poolStates{states, err}, true
}
