package zfs

import (
	"bytes"
	"context"
	"strings"

	"github.com/zpool-exporter/zpool_exporter/internal/parse"
	"github.com/zpool-exporter/zpool_exporter/internal/zfs/zpool"
)

// Status returns the parsed `zpool status` in the best form this zpool
// has, and notes how the read went in the freshness of zpool_status.
func (c *Client) Status(ctx context.Context) (*zpool.Status, error) {
	return c.status(ctx, c.detection)
}

// detection gives the capabilities, detecting them if need be, and what
// the probes printed for the reader that takes it.
type detection func(context.Context) (Capabilities, probed, error)

// detection is the detection of the client's own reads, which take
// nothing from the probes.
func (c *Client) detection(ctx context.Context) (Capabilities, probed, error) {
	caps, err := c.Capabilities(ctx)
	return caps, probed{}, err
}

// status is Status, with the capabilities from detect.
func (c *Client) status(ctx context.Context, detect detection) (*zpool.Status, error) {
	st, err := c.readStatus(ctx, detect)
	c.record(SourceStatus, err)
	return st, err
}

func (c *Client) readStatus(ctx context.Context, detect detection) (*zpool.Status, error) {
	caps, probed, err := detect(ctx)
	if err != nil {
		return nil, err
	}
	args := caps.StatusArgs
	// The only scrape's detection printed it already (see NewOnlyScrape).
	out := probed.status
	var text <-chan textStatus
	if !probed.hasStatus {
		if caps.StatusFormat == StatusJSON && c.jsonLackedStates() {
			// The text status will be needed again: it runs beside the
			// JSON rather than after it, so that a slow zpool costs one
			// wait.
			text = c.readTextStatus(ctx)
		}
		if out, err = c.zpool(ctx, args...); err != nil {
			return nil, err
		}
	}
	cmd := c.cfg.Zpool + " " + strings.Join(args, " ")
	var st *zpool.Status
	if caps.StatusFormat == StatusJSON {
		st, err = zpool.ParseStatusJSON(bytes.NewReader(out))
		if err == nil {
			st.Estimate(c.cfg.Now())
			c.fillMissingStates(ctx, st, text)
		}
	} else {
		st, err = zpool.ParseStatus(bytes.NewReader(out), c.cfg.Location)
	}
	if err != nil {
		return nil, parse.WithSource(err, cmd)
	}
	for _, p := range st.Pools {
		for _, w := range p.Warnings {
			c.logger.Warn("skipped a line of zpool status that could not be read; the rest of the pool is reported", "command", cmd, "pool", p.Name, "problem", w)
		}
	}
	if st.Pools == nil && !bytes.Contains(out, []byte("no pools available")) && len(bytes.TrimSpace(out)) > 0 && caps.StatusFormat != StatusJSON {
		return nil, parse.WithSource(parse.Errorf(0, "printed no pool that could be read"), cmd)
	}
	return st, nil
}

// fillMissingStates takes the states that JSON status lacks from the text
// status: OpenZFS 2.3.2 prints no state (nor type or GUID) for a dRAID
// vdev in JSON, and a vdev without a state would escape the health alerts.
// text is the text status when it was started beside the JSON, or nil.
func (c *Client) fillMissingStates(ctx context.Context, st *zpool.Status, text <-chan textStatus) {
	missing := false
	for _, p := range st.Pools {
		if p.Root != nil {
			p.Root.Walk(func(v *zpool.Vdev, _ string) { missing = missing || v.State == "" })
		}
	}
	c.mu.Lock()
	c.lackedStates = missing
	c.mu.Unlock()
	if !missing {
		return
	}
	if text == nil {
		text = c.readTextStatus(ctx)
	}
	r := <-text
	if r.err != nil {
		c.logger.Debug("cannot read the text status for the vdev states JSON lacks", "err", r.err)
		return
	}
	states := map[[2]string]string{}
	for _, p := range r.status.Pools {
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

// textStatus is the text status read for the states JSON lacks.
type textStatus struct {
	status *zpool.Status
	err    error
}

// readTextStatus reads `zpool status -p` in the background; the channel
// gets its result, and is never waited on in vain: the run ends by ctx's
// deadline.
func (c *Client) readTextStatus(ctx context.Context) <-chan textStatus {
	ch := make(chan textStatus, 1)
	go func() {
		out, err := c.zpool(ctx, "status", "-p")
		var st *zpool.Status
		if err == nil {
			st, err = zpool.ParseStatus(bytes.NewReader(out), c.cfg.Location)
			err = parse.WithSource(err, c.cfg.Zpool+" status -p")
		}
		ch <- textStatus{st, err}
	}()
	return ch
}

// jsonLackedStates tells whether the last JSON status lacked a vdev state.
func (c *Client) jsonLackedStates() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lackedStates
}
