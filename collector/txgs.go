package collector

import (
	"sort"
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/zpool-exporter/zpool_exporter/internal/zfs/kstat"
)

var (
	txgSyncDesc = desc("pool", "txg_sync_seconds",
		"Time each transaction group took to sync, from <pool>/txgs: long syncs are write-throttle stalls during a benchmark.", "pool")
	txgWrittenDesc = desc("pool", "txg_written_bytes",
		"Bytes each transaction group wrote while syncing.", "pool")
	txgDirtyDesc = desc("pool", "txg_dirty_bytes",
		"Dirty bytes each transaction group carried into its sync.", "pool")

	txgSyncBuckets  = prometheus.ExponentialBuckets(0.001, 4, 10)  // 1 ms to 4.4 min
	txgBytesBuckets = prometheus.ExponentialBuckets(64<<10, 4, 10) // 64 KiB to 16 GiB
)

// txgHistory turns the kernel's rolling list of recent transaction groups
// (the last zfs_txg_history of them) into histograms that only grow: each
// committed txg is counted once, the first time a scrape sees it.
type txgHistory struct {
	mu    sync.Mutex
	pools map[string]*poolTxgs
}

type poolTxgs struct {
	last                 uint64 // highest txg counted
	sync, written, dirty *histogram
}

func newTxgHistory() *txgHistory { return &txgHistory{pools: map[string]*poolTxgs{}} }

// update counts the txgs committed since the last call, from each pool's
// recent history, and sends the histograms.
func (h *txgHistory) update(history map[string][]kstat.Txg, ch chan<- prometheus.Metric) {
	h.mu.Lock()
	defer h.mu.Unlock()
	pools := make([]string, 0, len(history))
	for pool := range history {
		pools = append(pools, pool)
	}
	sort.Strings(pools)
	for _, pool := range pools {
		pt := h.pools[pool]
		if pt == nil {
			pt = &poolTxgs{sync: newHistogram(txgSyncBuckets), written: newHistogram(txgBytesBuckets), dirty: newHistogram(txgBytesBuckets)}
			h.pools[pool] = pt
		}
		for _, t := range history[pool] {
			if t.State != "committed" || t.TXG <= pt.last {
				continue
			}
			pt.last = t.TXG
			pt.sync.observe(t.Sync.Seconds())
			pt.written.observe(float64(t.NWritten))
			pt.dirty.observe(float64(t.NDirty))
		}
		ch <- pt.sync.metric(txgSyncDesc, pool)
		ch <- pt.written.metric(txgWrittenDesc, pool)
		ch <- pt.dirty.metric(txgDirtyDesc, pool)
	}
	for pool := range h.pools {
		if _, ok := history[pool]; !ok {
			delete(h.pools, pool) // exported or destroyed
		}
	}
}

// histogram accumulates observations for a const histogram.
type histogram struct {
	bounds []float64
	counts []uint64 // per bucket, not cumulative
	count  uint64
	sum    float64
}

func newHistogram(bounds []float64) *histogram {
	return &histogram{bounds: bounds, counts: make([]uint64, len(bounds))}
}

func (h *histogram) observe(v float64) {
	h.count++
	h.sum += v
	for i, b := range h.bounds {
		if v <= b {
			h.counts[i]++
			return
		}
	}
}

func (h *histogram) metric(d *prometheus.Desc, labels ...string) prometheus.Metric {
	buckets := make(map[float64]uint64, len(h.bounds))
	var cumulative uint64
	for i, b := range h.bounds {
		cumulative += h.counts[i]
		buckets[b] = cumulative
	}
	labels = labelValues(labels)
	m, err := prometheus.NewConstHistogram(d, h.count, h.sum, buckets, labels...)
	if err != nil {
		return prometheus.NewInvalidMetric(d, err)
	}
	return keyed{m, seriesKey(labels)}
}
