package zfs

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/zpool-exporter/zpool_exporter/internal/runner"
	"github.com/zpool-exporter/zpool_exporter/internal/zfs/zpool"
)

// Capabilities is what this zpool can print, detected by trying the best
// form first and logged once.
type Capabilities struct {
	StatusFormat string   // "json", "exact" (status -p) or "text"
	StatusArgs   []string // the `zpool status` arguments of that format
	GetArgs      []string // the `zpool get ... all` arguments that work here; nil: `get all POOL...`
	// VdevProperties is true when `zpool get ... all-vdevs` works (OpenZFS
	// 2.2+); it can only be tried once a pool exists.
	VdevProperties      bool
	VdevPropertiesKnown bool
}

// Status formats.
const (
	StatusJSON  = "json"
	StatusExact = "exact"
	StatusText  = "text"
)

// Forms of `zpool get` for pool properties, best first: exact and
// scripted, then scripted. When neither works (zfs-fuse, old Solaris), the
// table of `zpool get all POOL...` is read, with the pools from status.
var getForms = [][]string{{"get", "-Hp", "all"}, {"get", "-H", "all"}}

// Capabilities detects what zpool can do, once. A detection that timed out
// is not remembered, so a zpool that hung at start is asked again later.
func (c *Client) Capabilities(ctx context.Context) (Capabilities, error) {
	caps, _, err := c.capabilities(ctx)
	return caps, err
}

// probed is what the probes of a detection printed in the forms chosen,
// for the only scrape (see NewOnlyScrape).
type probed struct {
	status, get       []byte
	hasStatus, hasGet bool
}

// capabilities is Capabilities, with what the probes printed when this
// call ran the detection.
func (c *Client) capabilities(ctx context.Context) (Capabilities, probed, error) {
	caps, ok, failed, _ := c.detected()
	if ok {
		return caps, probed{}, nil
	}
	c.detectMu.Lock()
	defer c.detectMu.Unlock()
	caps, ok, failedNow, lastErr := c.detected()
	if ok {
		return caps, probed{}, nil
	}
	if failedNow != failed {
		return Capabilities{}, probed{}, lastErr // one failed while this caller waited
	}
	detected, out, err := c.detect(ctx)
	if err != nil {
		c.mu.Lock()
		c.detectErr = err
		c.detectFailed++
		c.mu.Unlock()
		return Capabilities{}, probed{}, err
	}
	// The client keeps its own copy, which learnVdevProperties updates
	// under mu; detected is this caller's.
	stored := detected
	c.mu.Lock()
	c.caps = &stored
	c.mu.Unlock()
	c.logger.Info("detected zpool capabilities", "status", strings.Join(detected.StatusArgs, " "),
		"properties", getDescription(detected.GetArgs))
	return detected, out, nil
}

// Detected returns the capabilities once a detection has found them,
// without detecting: ok is false before.
func (c *Client) Detected() (caps Capabilities, ok bool) {
	caps, ok, _, _ = c.detected()
	return caps, ok
}

// detected returns a copy of the capabilities once known (ok), and how
// many detections failed so far with the last one's error. It copies
// under mu, since learnVdevProperties updates the capabilities in place.
func (c *Client) detected() (caps Capabilities, ok bool, failed int, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.caps == nil {
		return Capabilities{}, false, c.detectFailed, c.detectErr
	}
	return *c.caps, true, c.detectFailed, c.detectErr
}

// detect finds the status form and the get form. Neither depends on the
// other, so they are probed side by side: detection then takes the time of
// the slower, not of both. A pool that hangs zpool (suspended) then
// leaves at most the get probe hung beside the status probe, as it leaves
// a scrape's `zpool get` beside its status: pool properties never waited
// for status, and the runner keeps one process per command line.
func (c *Client) detect(ctx context.Context) (Capabilities, probed, error) {
	var caps Capabilities
	var out probed
	var getErr error
	var wg sync.WaitGroup
	wg.Go(func() { caps.GetArgs, out.get, out.hasGet, getErr = c.detectGet(ctx) })
	var err error
	caps.StatusFormat, caps.StatusArgs, out.status, out.hasStatus, err = c.detectStatus(ctx)
	wg.Wait()
	if err == nil {
		err = getErr
	}
	return caps, out, err
}

// detectStatus finds the best status form whose output this exporter can
// also parse, and returns that output; the text, unread, when no other
// form works.
func (c *Client) detectStatus(ctx context.Context) (format string, args []string, out []byte, read bool, err error) {
	// The forms an older zpool refuses are no failures of its commands.
	// -t and -i add each leaf's TRIM and initialization (OpenZFS 0.8+):
	// without them the JSON has neither, and the text only an active one.
	parseJSON := func(b []byte) error {
		_, err := zpool.ParseStatusJSON(bytes.NewReader(b))
		return err
	}
	probes := []struct {
		format string
		args   []string
		parse  func([]byte) error
	}{
		{StatusJSON, []string{"status", "-j", "--json-int", "-t", "-i"}, parseJSON},
		{StatusJSON, []string{"status", "-j", "--json-int"}, parseJSON},
		// -s adds the slow I/O column (OpenZFS 0.8+).
		{StatusExact, []string{"status", "-s", "-p", "-t", "-i"}, nil},
		{StatusExact, []string{"status", "-s", "-p"}, nil},
		{StatusExact, []string{"status", "-p"}, nil},
	}
	for _, p := range probes {
		out, err := c.probe(ctx, p.args...)
		// A zpool that is not installed says nothing of what it can do:
		// detection waits for one, rather than settle for the text.
		if runner.Inconclusive(ctx, err) || errors.Is(err, runner.ErrNotFound) {
			return "", nil, nil, false, fmt.Errorf("detecting zpool capabilities: %w", err)
		}
		if err == nil && p.parse != nil {
			err = p.parse(out)
		}
		if err == nil {
			return p.format, p.args, out, true, nil
		}
		c.logger.Debug("zpool status form not available", "args", strings.Join(p.args, " "), "err", err)
	}
	return StatusText, []string{"status"}, nil, false, nil
}

// detectGet finds the first form of getForms that works, and returns its
// output; nil args when none does.
func (c *Client) detectGet(ctx context.Context) (args []string, out []byte, read bool, err error) {
	for _, args := range getForms {
		out, err := c.probe(ctx, args...)
		if runner.Inconclusive(ctx, err) {
			return nil, nil, false, fmt.Errorf("detecting zpool capabilities: %w", err)
		}
		if err == nil {
			return args, out, true, nil
		}
		c.logger.Debug("zpool get form not available", "args", strings.Join(args, " "), "err", err)
	}
	return nil, nil, false, nil
}

// vdevProperties says whether vdev properties work here: known is false
// until a pool has been asked.
func (c *Client) vdevProperties() (available, known bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.caps == nil {
		return false, false
	}
	return c.caps.VdevProperties, c.caps.VdevPropertiesKnown
}

// learnVdevProperties remembers, and logs once, whether vdev properties
// work here.
func (c *Client) learnVdevProperties(available bool, why error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.caps == nil || c.caps.VdevPropertiesKnown {
		return
	}
	c.caps.VdevPropertiesKnown, c.caps.VdevProperties = true, available
	if available {
		c.logger.Info("per-vdev I/O counters come from vdev properties")
	} else {
		c.logger.Info("vdev properties not available; per-vdev I/O counters come from a zpool iostat stream", "err", why)
	}
}

func getDescription(args []string) string {
	if args == nil {
		return "get all POOL..."
	}
	return strings.Join(args, " ")
}
