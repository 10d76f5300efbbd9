package collector

import (
	"maps"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// Reasons a series is dropped before it leaves the exporter.
const (
	dropInvalid   = "invalid"   // the metric could not be built or written
	dropDuplicate = "duplicate" // a series with the same name and labels was already sent
)

// exporterMetrics names the exporter's own metrics (sources, commands) in
// zfs_exporter_dropped_series_total.
const exporterMetrics = "exporter"

var droppedSeriesDesc = desc("exporter", "dropped_series_total",
	"Series dropped before they left the exporter, by the collector that made them: invalid (could not be built from what was read) or duplicate (a second series with the same labels in one scrape). A series appears at the first drop; each drop is logged.",
	"collector", "reason")

// maxLoggedDrops bounds the dropped series remembered so that each is
// logged once at warning level, not at every scrape.
const maxLoggedDrops = 1000

// admission checks every metric of one scrape on its way out: a metric that
// cannot be written, or a series already sent, is dropped, counted and
// logged. A bad value read off zpool then costs its own series, never the
// scrape, which a registry fails as a whole on either; gatherFamilies
// relies on it.
type admission struct {
	e    *Exporter
	out  func(prometheus.Metric)
	seen map[*prometheus.Desc]map[string]struct{}
	// reserve, when not nil, is told how many metrics of a Desc a batch
	// is about to pass on, so that out makes room for them at once.
	reserve func(d *prometheus.Desc, n int)
	counts  map[*prometheus.Desc]int // sendBatch's, kept for the next batch
}

func (e *Exporter) newAdmission(out func(prometheus.Metric), reserve func(*prometheus.Desc, int)) *admission {
	return &admission{e: e, out: out, reserve: reserve, seen: map[*prometheus.Desc]map[string]struct{}{}}
}

// sendBatch sends the metrics of a collector. It counts them by Desc
// first, so that the set of series of each Desc, and what out keeps of
// them, are made at their size: grown a metric at a time, they were
// rehashed and copied over and over (at 1,000 leaves a Desc has up to
// 12,000 series).
func (a *admission) sendBatch(collector string, metrics []prometheus.Metric) {
	if a.counts == nil {
		a.counts = map[*prometheus.Desc]int{}
	}
	clear(a.counts)
	for _, m := range metrics {
		a.counts[m.Desc()]++
	}
	for d, n := range a.counts {
		if a.seen[d] == nil {
			a.seen[d] = make(map[string]struct{}, n)
		}
		if a.reserve != nil {
			a.reserve(d, n)
		}
	}
	for _, m := range metrics {
		a.send(collector, m)
	}
}

// send passes m on unless it is invalid or a duplicate. A metric of
// constMetric is valid and knows its series; any other is written to find
// out.
func (a *admission) send(collector string, m prometheus.Metric) {
	key, ok := "", false
	switch k := m.(type) {
	case plainMetric:
		key, ok = k.key, true
	case histogramMetric:
		key, ok = k.key, true
	case keyed:
		key, ok = k.key, true
	}
	if !ok {
		var pb dto.Metric
		if err := m.Write(&pb); err != nil {
			a.e.dropped(collector, dropInvalid, m.Desc(), err.Error())
			return
		}
		values := make([]string, len(pb.GetLabel()))
		for i, l := range pb.GetLabel() {
			values[i] = l.GetValue()
		}
		key = seriesKey(values)
	}
	series := a.seen[m.Desc()]
	if series == nil {
		series = map[string]struct{}{}
		a.seen[m.Desc()] = series
	}
	if _, dup := series[key]; dup {
		a.e.dropped(collector, dropDuplicate, m.Desc(), strings.ReplaceAll(key, "\x00", ","))
		return
	}
	series[key] = struct{}{}
	a.out(m)
}

// sendAll passes on what collect sends, as made by collector.
func (a *admission) sendAll(collector string, collect func(chan<- prometheus.Metric)) {
	ch := make(chan prometheus.Metric)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for m := range ch {
			a.send(collector, m)
		}
	}()
	collect(ch)
	close(ch)
	<-done
}

// dropped counts a dropped series, and logs it the first time it is seen.
func (e *Exporter) dropped(collector, reason string, d *prometheus.Desc, what string) {
	e.mu.Lock()
	e.drops[dropKey{collector, reason}]++
	key := collector + "\xff" + reason + "\xff" + d.String() + "\xff" + what
	_, logged := e.loggedDrops[key]
	if !logged && len(e.loggedDrops) < maxLoggedDrops {
		e.loggedDrops[key] = struct{}{}
	}
	e.mu.Unlock()
	log := e.logger.Debug
	if !logged {
		log = e.logger.Warn
	}
	log("series dropped", "collector", collector, "reason", reason, "metric", d.String(), "series", what)
}

type dropKey struct{ collector, reason string }

// collectDrops sends the drop counts of the collectors that dropped a
// series. A drop is a fault to look into (the log says which series and
// why): zeros for every collector and reason would be most of the
// exporter's own series on a healthy host.
func (e *Exporter) collectDrops(ch chan<- prometheus.Metric) {
	e.mu.Lock()
	drops := maps.Clone(e.drops)
	e.mu.Unlock()
	for k, n := range drops {
		counter(ch, droppedSeriesDesc, n, k.collector, k.reason)
	}
}
