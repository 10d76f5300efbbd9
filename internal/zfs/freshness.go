package zfs

import (
	"maps"
	"time"
)

// The sources a Client reads, by the name the freshness metrics give them
// in their source label.
const (
	SourceStatus         = "zpool_status"
	SourceProperties     = "zpool_get"
	SourceVdevProperties = "zpool_vdev_properties"
	SourceKstat          = "kstat"
	SourceKstatState     = "kstat_pool_state"
)

// SourceState is how a source fared: whether its last read worked, and
// when it last gave a usable answer.
type SourceState struct {
	Up          bool
	LastSuccess time.Time // zero until it first answered
}

// Freshness returns the state of every source read so far, by name.
func (c *Client) Freshness() map[string]SourceState {
	c.mu.Lock()
	defer c.mu.Unlock()
	return maps.Clone(c.freshness)
}

// record notes the outcome of reading a source.
func (c *Client) record(source string, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	st := c.freshness[source]
	st.Up = err == nil
	if err == nil {
		st.LastSuccess = c.cfg.Now()
	}
	c.freshness[source] = st
}
