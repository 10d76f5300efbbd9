package zfs

import (
	"bytes"
	"context"
	"fmt"
	"strings"

	"github.com/zpool-exporter/zpool_exporter/internal/zfs/zpool"
)

// Status returns the parsed `zpool status` in the best form this zpool
// has, and notes how the read went in the freshness of zpool_status.
func (c *Client) Status(ctx context.Context) (*zpool.Status, error) {
	st, err := c.readStatus(ctx)
	c.record(SourceStatus, err)
	return st, err
}

func (c *Client) readStatus(ctx context.Context) (*zpool.Status, error) {
	caps, err := c.Capabilities(ctx)
	if err != nil {
		return nil, err
	}
	args := caps.StatusArgs
	out, err := c.zpool(ctx, args...)
	if err != nil {
		return nil, err
	}
	cmd := c.cfg.Zpool + " " + strings.Join(args, " ")
	var st *zpool.Status
	if caps.StatusFormat == StatusJSON {
		st, err = zpool.ParseStatusJSON(bytes.NewReader(out))
		if err == nil {
			// JSON carries raw scan figures only; zpool's text derives the
			// rate and time left from them and the clock, and so do we.
			now := c.cfg.Now()
			for _, p := range st.Pools {
				for i := range p.Scans {
					p.Scans[i].Estimate(now)
				}
			}
			c.fillMissingStates(ctx, st)
		}
	} else {
		st, err = zpool.ParseStatus(bytes.NewReader(out), c.cfg.Location)
	}
	if err != nil {
		return nil, fmt.Errorf("parsing output of `%s`: %w", cmd, err)
	}
	for _, p := range st.Pools {
		for _, w := range p.Warnings {
			c.logger.Warn("skipped a line of zpool status that could not be read; the rest of the pool is reported", "command", cmd, "pool", p.Name, "problem", w)
		}
	}
	if st.Pools == nil && !bytes.Contains(out, []byte("no pools available")) && len(bytes.TrimSpace(out)) > 0 && caps.StatusFormat != StatusJSON {
		return nil, fmt.Errorf("`%s` printed no pool that could be read", cmd)
	}
	return st, nil
}

// fillMissingStates takes the states that JSON status lacks from the text
// status: OpenZFS 2.3.2 prints no state (nor type or GUID) for a dRAID
// vdev in JSON, and a vdev without a state would escape the health alerts.
func (c *Client) fillMissingStates(ctx context.Context, st *zpool.Status) {
	missing := false
	for _, p := range st.Pools {
		if p.Root != nil {
			p.Root.Walk(func(v *zpool.Vdev, _ string) { missing = missing || v.State == "" })
		}
	}
	if !missing {
		return
	}
	out, err := c.zpool(ctx, "status", "-p")
	var text *zpool.Status
	if err == nil {
		text, err = zpool.ParseStatus(bytes.NewReader(out), c.cfg.Location)
	}
	if err != nil {
		c.logger.Debug("cannot read the text status for the vdev states JSON lacks", "err", err)
		return
	}
	states := map[[2]string]string{}
	for _, p := range text.Pools {
		if p.Root != nil {
			p.Root.Walk(func(v *zpool.Vdev, _ string) { states[[2]string{p.Name, v.Name}] = v.State })
		}
	}
	for _, p := range st.Pools {
		if p.Root != nil {
			p.Root.Walk(func(v *zpool.Vdev, _ string) {
				if v.State == "" {
					v.State = states[[2]string{p.Name, v.Name}]
				}
			})
		}
	}
}
