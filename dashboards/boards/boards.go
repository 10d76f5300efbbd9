// Package boards builds the mixin's Grafana dashboards with the Grafana
// foundation SDK. Files returns their JSON; cmd/mixin writes it to
// out/dashboards, where it is committed.
package boards

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/grafana/grafana-foundation-sdk/go/cog"
	"github.com/grafana/grafana-foundation-sdk/go/cog/variants"
	"github.com/grafana/grafana-foundation-sdk/go/common"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
	"github.com/grafana/grafana-foundation-sdk/go/heatmap"
	"github.com/grafana/grafana-foundation-sdk/go/prometheus"
	"github.com/grafana/grafana-foundation-sdk/go/stat"
	"github.com/grafana/grafana-foundation-sdk/go/table"
	"github.com/grafana/grafana-foundation-sdk/go/timeseries"

	"github.com/zpool-exporter/zpool_exporter/dashboards/config"
)

// Board is one generated dashboard.
type Board struct {
	// File is the name under out/dashboards.
	File string
	// UID is the dashboard's uid: links and provisioning rely on it, so
	// it never changes.
	UID   string
	Build func(config.Config) (dashboard.Dashboard, error)
}

// Boards lists the dashboards in a fixed order.
func Boards() []Board {
	return []Board{
		{"zfs-pools.json", "zfs-pools", poolsBoard},
		{"zfs-io.json", "zfs-io", ioBoard},
		{"zfs-benchmark.json", "zfs-benchmark", benchmarkBoard},
		{"zfs-scans.json", "zfs-scans", scansBoard},
		{"zfs-datasets.json", "zfs-datasets", datasetsBoard},
		{"zfs-arc.json", "zfs-arc", arcBoard},
	}
}

// Files returns each dashboard's JSON by file name.
func Files(cfg config.Config) (map[string][]byte, error) {
	files := make(map[string][]byte)
	for _, b := range Boards() {
		d, err := b.Build(cfg)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", b.File, err)
		}
		if d.Uid == nil || *d.Uid != b.UID {
			return nil, fmt.Errorf("%s: uid is not %q", b.File, b.UID)
		}
		data, err := json.MarshalIndent(d, "", "  ")
		if err != nil {
			return nil, fmt.Errorf("%s: %w", b.File, err)
		}
		files[b.File] = append(data, '\n')
	}
	return files, nil
}

// dsVar is the datasource variable every panel, target, variable and
// annotation reads from.
const dsVar = "datasource"

func datasource() common.DataSourceRef {
	return common.DataSourceRef{Type: cog.ToPtr("prometheus"), Uid: cog.ToPtr("${" + dsVar + "}")}
}

// grafanaDatasource is Grafana's built-in data source: the annotations
// kept in Grafana itself, such as the regions zpool_bench posts. Only tag
// annotations read it; everything else reads Prometheus.
func grafanaDatasource() common.DataSourceRef {
	return common.DataSourceRef{Type: cog.ToPtr("grafana"), Uid: cog.ToPtr("-- Grafana --")}
}

// sel writes label selectors: the dashboard's job variable, then its
// instance and, for pool-scoped metrics, pool variables.
type sel struct{ base string }

func (s sel) join(parts []string, extra []string) string {
	var all []string
	if s.base != "" {
		all = append(all, s.base)
	}
	all = append(all, parts...)
	all = append(all, extra...)
	return "{" + strings.Join(all, ", ") + "}"
}

// pool selects a pool-scoped metric of the chosen instances and pools.
func (s sel) pool(extra ...string) string {
	return s.join([]string{`instance=~"$instance"`, `pool=~"$pool"`}, extra)
}

// dataset selects a dataset-scoped metric of the chosen instances, pools
// and datasets (the datasets dashboard's variable).
func (s sel) dataset(extra ...string) string {
	return s.join([]string{`instance=~"$instance"`, `pool=~"$pool"`, `dataset=~"$dataset"`}, extra)
}

// host selects a host-wide metric (ARC, CPU) of the chosen instances.
func (s sel) host(extra ...string) string {
	return s.join([]string{`instance=~"$instance"`}, extra)
}

// topLevel selects the top-level vdevs (mirror-0, raidz1-1, a single
// disk, log, cache and spare devices): those whose parent is the pool's
// root vdev, the vdev named after the pool. zfs_vdev_info carries the
// parent's name, so the root's own name is copied into "parent" to match.
func (s sel) topLevel(extra ...string) string {
	return fmt.Sprintf(`zfs_vdev_info%s * on(instance, pool, parent) group_left() label_replace(zfs_vdev_info%s, "parent", "$1", "vdev", "(.+)")`,
		s.pool(extra...), s.pool(`vdev_type="root"`))
}

// leaves selects the vdevs that are nobody's parent (disks, files, and a
// pool's single-disk top-level vdevs). The parents are grouped first: two
// disks of one mirror differ in no label but their name where the status
// has no paths or GUIDs (text output), and renaming both to their parent
// would make two identical series, an error in PromQL.
func (s sel) leaves() string {
	return fmt.Sprintf(`zfs_vdev_info%s unless on(instance, pool, vdev) label_replace(group by (instance, pool, parent) (zfs_vdev_info%s), "vdev", "$1", "parent", "(.+)")`,
		s.pool(), s.pool())
}

// vdevRate is the rate of a vdev counter, kept for the vdevs in set (from
// topLevel or leaves), with the given zfs_vdev_info labels copied over.
func (s sel) vdevRate(metric, set string, labels ...string) string {
	return fmt.Sprintf("rate(%s%s[$__rate_interval]) * on(instance, pool, vdev) group_left(%s) (%s)",
		metric, s.pool(), strings.Join(labels, ", "), set)
}

// poolRate is a pool's rate of a vdev counter: the sum over its top-level
// vdevs but cache and spare devices, which is the pool row of zpool
// iostat. The pool's own (root) vdev cannot stand in for it: where the
// counters come from vdev properties (OpenZFS 2.2+), its row reads 0.
func (s sel) poolRate(metric string) string {
	return fmt.Sprintf("sum by (instance, pool) (%s)", s.vdevRate(metric, s.topLevel(`class!~"cache|spare"`)))
}

// root selects each pool's own vdev, named after the pool: the first row
// of zpool iostat -w, -r and -q, whose histograms and queues sum the
// vdevs under it (cache devices, which are not under it, excluded).
func (s sel) root() string { return "zfs_vdev_info" + s.pool(`vdev_type="root"`) }

// histRate is the rate of a vdev histogram, narrowed by match, kept for
// the vdevs in set (root, topLevel or leaves). series is the histogram's
// own name (a native histogram) or one of its classic series (_bucket,
// _sum, _count). The pool, top-level and leaf rows are all exported, so
// without the set a sum would count each I/O once per level. "and" keeps
// the histogram's labels, le among them, and takes a set whatever labels
// its series carry.
func (s sel) histRate(series, set string, match ...string) string {
	return fmt.Sprintf("rate(%s%s[$__rate_interval]) and on(instance, pool, vdev) (%s)", series, s.pool(match...), set)
}

// Every histogram query reads both forms a Prometheus may store: the
// native histogram, one series (Prometheus 3 with
// convert_classic_histograms_to_nhcb, or scrape_native_histograms for the
// request sizes), and the classic _bucket, _sum and _count series. Each
// query takes the native form of a series where it is stored and the
// classic one otherwise: "or" adds the right side's series whose labels
// the left lacks. On Prometheus 2 the native side is empty.

// bucketSum is a vdev histogram summed by le alone, for a heatmap: one
// distribution over every vdev in set. The classic buckets come first,
// the form Grafana's heatmap is known to draw; the native sum, which
// carries no le, only where no bucket is stored ("or on ()").
func (s sel) bucketSum(family, set string, match ...string) string {
	return fmt.Sprintf("sum by (le) (%s) or on () sum (%s)",
		s.histRate(family+"_bucket", set, match...), s.histRate(family, set, match...))
}

// quantile is the q-quantile of a vdev histogram, one series per value of
// the by labels, from the histogram summed by those labels.
func (s sel) quantile(q float64, family, by, set string, match ...string) string {
	return fmt.Sprintf("histogram_quantile(%g, sum by (%s) (%s)) or histogram_quantile(%g, sum by (%s, le) (%s))",
		q, by, s.histRate(family, set, match...), q, by, s.histRate(family+"_bucket", set, match...))
}

// mean is a vdev histogram's mean over the rate interval, its sum over
// its count, one series per value of the by labels.
func (s sel) mean(family, by, set string, match ...string) string {
	native := fmt.Sprintf("sum by (%s) (%s)", by, s.histRate(family, set, match...))
	return fmt.Sprintf("histogram_sum(%s) / histogram_count(%s) or sum by (%s) (%s) / sum by (%s) (%s)",
		native, native, by, s.histRate(family+"_sum", set, match...), by, s.histRate(family+"_count", set, match...))
}

// hostRecorded selects a host-wide series of the recording rules
// (config/records.go: the ARC hit ratios, CPU); they keep the job and
// instance labels, so the selector applies, but have no pool label, which
// pool=~"$pool" would demand.
func (s sel) hostRecorded(name string) string { return name + s.host() }

// query is one Prometheus target.
type query struct {
	expr, legend string
	// table asks for an instant query in table format, for table panels.
	table bool
	// heatmap asks for a range query in heatmap format, for heatmap
	// panels: the data source sorts the series by le and takes from each
	// bucket the one below it, so that a cell holds its bucket alone.
	heatmap bool
}

func q(expr, legend string) query { return query{expr: expr, legend: legend} }

func tq(expr string) query { return query{expr: expr, table: true} }

// hq is a heatmap's query: the rate of a histogram's buckets summed by le.
func hq(expr string) query { return query{expr: expr, legend: "{{le}}", heatmap: true} }

func (qu query) build(ref string) *prometheus.DataqueryBuilder {
	b := prometheus.NewDataqueryBuilder().
		Datasource(datasource()).
		RefId(ref).
		Expr(qu.expr)
	if qu.table {
		return b.Instant().Format(prometheus.PromQueryFormatTable)
	}
	b = b.Range()
	if qu.heatmap {
		b = b.Format(prometheus.PromQueryFormatHeatmap)
	}
	if qu.legend != "" {
		b = b.LegendFormat(qu.legend)
	}
	return b
}

// cell is a value column of a table: one number per row, carrying only
// the labels that identify the row, so that Grafana's merge puts it on its
// row (a metric name left on it would be one more label to match).
func cell(keys, expr string) query { return tq(fmt.Sprintf("max by (%s) (%s)", keys, expr)) }

// Keys of the rows of the tables: a pool, a vdev, a scan, a dataset, a
// snapshot, a source of the exporter.
const (
	poolKeys     = "job, instance, pool"
	vdevKeys     = "job, instance, pool, vdev"
	scanKeys     = "job, instance, pool, function, vdev"
	datasetKeys  = "job, instance, pool, dataset"
	snapshotKeys = "job, instance, pool, dataset, snapshot"
	sourceKeys   = "job, instance, source"
	// windowKeys are the labels of a benchmark window.
	windowKeys = "job, instance, window, name, pool"
)

func refID(i int) string { return string(rune('A' + i)) }

// board wraps the SDK's dashboard builder: it numbers panels and gives
// every dashboard the same variables, time range and links.
type board struct {
	*dashboard.DashboardBuilder
	cfg config.Config
	s   sel
	id  uint32
}

// jobSelector picks the series of the jobs chosen in the job variable.
// Every job that scrapes the exporter is listed, whatever its name; the
// rules pick theirs by the configured selector instead.
const jobSelector = `job=~"$job"`

func newBoard(cfg config.Config, uid, title, description string, tags ...string) *board {
	s := sel{base: jobSelector}
	d := dashboard.NewDashboardBuilder(title).
		Uid(uid).
		Description(description).
		Tags(append([]string{"zfs"}, tags...)).
		Editable().
		Tooltip(dashboard.DashboardCursorSyncCrosshair).
		Time("now-6h", "now").
		Refresh("30s").
		Timezone("browser").
		Link(dashboard.NewDashboardLinkBuilder("ZFS").
			Type(dashboard.DashboardLinkTypeDashboards).
			Tags([]string{"zfs"}).
			AsDropdown(true).
			IncludeVars(true).
			KeepTime(true)).
		WithVariable(dashboard.NewDatasourceVariableBuilder(dsVar).
			Label("Data source").
			Type("prometheus")).
		WithVariable(queryVar("job", "Job", "label_values(zfs_pool_state, job)")).
		WithVariable(queryVar("instance", "Instance",
			fmt.Sprintf("label_values(zfs_pool_state%s, instance)", s.join(nil, nil)))).
		WithVariable(queryVar("pool", "Pool",
			fmt.Sprintf("label_values(zfs_pool_state%s, pool)", s.host())))
	return &board{DashboardBuilder: d, cfg: cfg, s: s}
}

func queryVar(name, label, query string) *dashboard.QueryVariableBuilder {
	return dashboard.NewQueryVariableBuilder(name).
		Label(label).
		Datasource(datasource()).
		Query(dashboard.StringOrMap{String: cog.ToPtr(query)}).
		Definition(query).
		Refresh(dashboard.VariableRefreshOnTimeRangeChanged).
		Sort(dashboard.VariableSortAlphabeticalAsc).
		Multi(true).
		IncludeAll(true).
		AllValue(".+").
		Current(dashboard.VariableOption{
			Text:  dashboard.StringOrArrayOfString{String: cog.ToPtr("All")},
			Value: dashboard.StringOrArrayOfString{String: cog.ToPtr("$__all")},
		})
}

func (b *board) nextID() uint32 { b.id++; return b.id }

func (b *board) row(title string) {
	b.WithRow(dashboard.NewRowBuilder(title).Id(b.nextID()))
}

// annotation draws the moments expr is non-zero, with the datasource
// variable like every panel.
func (b *board) annotation(name, color, expr, title, text, tags string) {
	b.Annotation(dashboard.NewAnnotationQueryBuilder().
		Name(name).
		Datasource(datasource()).
		Enable(true).
		IconColor(color).
		Expr(expr).
		Step("1m").
		TitleFormat(title).
		TextFormat(text).
		TagKeys(tags))
}

// eventAnnotations marks the kernel's events that change what a pool's
// panels show: vdev state changes, and the starts and ends of resilvers
// and scrubs (a canceled scrub ends with scrub_abort, not scrub_finish),
// from the exporter's count of each class per pool. The increase is over
// $__rate_interval, which Grafana keeps a step and a scrape wide: no
// event falls between two steps, and one on the edge marks two, which
// Grafana draws as one region. Unlike the checksum, I/O and delay
// ereports, these classes are not exported at 0 beforehand: the first
// event of a class in a pool that the exporter counts starts its series,
// which no increase shows.
func (b *board) eventAnnotations() {
	mark := func(classes ...string) string {
		return shortEvent(fmt.Sprintf(`increase(zfs_pool_events_total%s[$__rate_interval]) > 0`,
			b.s.pool(fmt.Sprintf("class=~%q", strings.Join(classes, "|")))))
	}
	b.annotation("Vdev state changes", "red", mark(config.EventStateChange),
		"state change", "a vdev of {{pool}} on {{instance}} changed state: zpool events -v {{pool}} says which", "pool,event")
	b.annotation("Resilver events", "yellow", mark(config.EventResilverStart, config.EventResilverFinish),
		"{{event}}", "{{event}} of {{pool}} on {{instance}}", "pool,event")
	b.annotation("Scrub events", "dark-blue", mark(config.EventScrubStart, config.EventScrubFinish, config.EventScrubAbort),
		"{{event}}", "{{event}} of {{pool}} on {{instance}}", "pool,event")
}

// shortEvent gives the series of expr, which carry an event class, an
// event label for legends and titles: the class's last part, as
// "checksum" of ereport.fs.zfs.checksum or "scrub_start" of
// sysevent.fs.zfs.scrub_start ("other", the exporter's class past 64 in a
// pool, stays whole).
func shortEvent(expr string) string {
	return fmt.Sprintf(`label_replace(%s, "event", "$1", "class", "(?:.*[.])?(.+)")`, expr)
}

// benchRunTag is the tag zpool_bench gives the region annotation of every
// run it marks in Grafana (cmd/zpool_bench/run.go in the exporter's
// module, which this module does not import: the tests pin the literal).
const benchRunTag = "zpool-bench"

// tagAnnotation shows the annotations kept in Grafana that carry every
// one of tags: regions (time to timeEnd) are drawn as shaded spans. Grafana
// runs it, not Prometheus, so it has no expression.
func (b *board) tagAnnotation(name, color string, tags ...string) {
	b.Annotation(dashboard.NewAnnotationQueryBuilder().
		Name(name).
		Datasource(grafanaDatasource()).
		Enable(true).
		IconColor(color).
		Target(tagTarget{dashboard.NewAnnotationTargetBuilder().
			Type("tags").
			Tags(tags).
			MatchAny(false).
			Limit(100)}))
}

// tagTarget is the target of a query of Grafana's own annotations. The
// SDK types it (dashboard.AnnotationTarget) but does not make it one of
// the data query variants an annotation's target takes, so it is carried
// as an untyped query with the same fields.
type tagTarget struct {
	b *dashboard.AnnotationTargetBuilder
}

func (t tagTarget) Build() (variants.Dataquery, error) {
	target, err := t.b.Build()
	if err != nil {
		return nil, err
	}
	raw, err := json.Marshal(target)
	if err != nil {
		return nil, err
	}
	var q variants.UnknownDataquery
	if err := json.Unmarshal(raw, &q); err != nil {
		return nil, err
	}
	return q, nil
}

// timeseries starts a graph panel; callers add panel-specific options.
func (b *board) timeseries(title, description, unit string, w, h uint32, qs ...query) *timeseries.PanelBuilder {
	p := timeseries.NewPanelBuilder().
		Id(b.nextID()).
		Title(title).
		Description(description).
		Datasource(datasource()).
		Unit(unit).
		Span(w).
		Height(h).
		FillOpacity(10).
		ShowPoints(common.VisibilityModeNever).
		Legend(common.NewVizLegendOptionsBuilder().
			DisplayMode(common.LegendDisplayModeTable).
			Placement(common.LegendPlacementBottom).
			ShowLegend(true).
			Calcs([]string{"mean", "max", "lastNotNull"})).
		Tooltip(common.NewVizTooltipOptionsBuilder().
			Mode(common.TooltipDisplayModeMulti).
			Sort(common.SortOrderDescending))
	for i, qu := range qs {
		p = p.WithTarget(qu.build(refID(i)))
	}
	return p
}

// stacked is a time series whose series add up (bandwidth of the vdevs
// of a pool, CPU by mode).
func (b *board) stacked(title, description, unit string, w, h uint32, qs ...query) *timeseries.PanelBuilder {
	return b.timeseries(title, description, unit, w, h, qs...).
		FillOpacity(40).
		Stacking(common.NewStackingConfigBuilder().Mode(common.StackingModeNormal))
}

// heatmap draws a histogram over time from its le buckets as they are
// (hq), one row of cells per bucket, each cell coloured by the I/Os per
// second that fell in it; yUnit is the unit of the buckets' bounds.
// Grafana computes no buckets of its own here, and zero cells stay blank
// so that the busy buckets stand out.
func (b *board) heatmap(title, description, yUnit string, w, h uint32, qu query) *heatmap.PanelBuilder {
	return heatmap.NewPanelBuilder().
		Id(b.nextID()).
		Title(title).
		Description(description).
		Datasource(datasource()).
		Unit("iops").
		Span(w).
		Height(h).
		Calculate(false).
		RowsFrame(heatmap.NewRowsHeatmapOptionsBuilder().Layout(common.HeatmapCellLayoutLe)).
		YAxis(heatmap.NewYAxisConfigBuilder().Unit(yUnit).AxisPlacement(common.AxisPlacementLeft)).
		CellValues(heatmap.NewCellValuesBuilder().Unit("iops")).
		Color(heatmap.NewHeatmapColorOptionsBuilder().
			Mode(heatmap.HeatmapColorModeScheme).
			Scheme("Oranges").
			Fill("dark-orange").
			Scale(heatmap.HeatmapColorScaleExponential).
			Exponent(0.5).
			Steps(64)).
		FilterValues(heatmap.NewFilterValueRangeBuilder().Le(1e-9)).
		Tooltip(heatmap.NewHeatmapTooltipBuilder().Mode(common.TooltipDisplayModeSingle).YHistogram(true)).
		ShowLegend().
		WithTarget(qu.build(refID(0)))
}

func (b *board) stat(title, description, unit string, w, h uint32, qs ...query) *stat.PanelBuilder {
	p := stat.NewPanelBuilder().
		Id(b.nextID()).
		Title(title).
		Description(description).
		Datasource(datasource()).
		Unit(unit).
		Span(w).
		Height(h).
		Orientation(common.VizOrientationAuto).
		ColorMode(common.BigValueColorModeBackground).
		GraphMode(common.BigValueGraphModeNone).
		ReduceOptions(common.NewReduceDataOptionsBuilder().Calcs([]string{"lastNotNull"}))
	for i, qu := range qs {
		p = p.WithTarget(qu.build(refID(i)))
	}
	return p
}

// col is one column of a table: a label or a "Value #X" field, the title
// it is shown with, and its own unit, colours or mappings.
type col struct {
	field, title string
	props        []dashboard.DynamicConfigValue
}

// table builds a table from instant queries in table format: the first
// query gives the rows (its labels are the columns), the others add a
// value column each ("Value #B"...), merged on the labels they share.
// cols are shown in order; hide names the other columns to drop.
func (b *board) table(title, description string, w, h uint32, qs []query, cols []col, hide ...string) *table.PanelBuilder {
	p := table.NewPanelBuilder().
		Id(b.nextID()).
		Title(title).
		Description(description).
		Datasource(datasource()).
		Unit("short").
		Span(w).
		Height(h).
		CellHeight(common.TableCellHeightSm).
		Footer(common.NewTableFooterOptionsBuilder().Show(false).Reducer([]string{"sum"}))
	for i, qu := range qs {
		qu.table = true
		p = p.WithTarget(qu.build(refID(i)))
	}
	exclude := map[string]bool{"Time": true, "job": true, "__name__": true}
	for _, c := range hide {
		exclude[c] = true
	}
	index := map[string]int{}
	for i, c := range cols {
		index[c.field] = i
	}
	if len(qs) > 1 {
		p = p.WithTransformation(dashboard.DataTransformerConfig{Id: "merge", Options: map[string]any{}})
	}
	p = p.WithTransformation(dashboard.DataTransformerConfig{Id: "organize", Options: map[string]any{
		"excludeByName": exclude,
		"indexByName":   index,
		"renameByName":  map[string]string{},
	}})
	for _, c := range cols {
		props := c.props
		if c.title != "" && c.title != c.field {
			props = append([]dashboard.DynamicConfigValue{{Id: "displayName", Value: c.title}}, props...)
		}
		if len(props) > 0 {
			p = p.OverrideByName(c.field, props)
		}
	}
	return p
}

// unit and friends are override properties for one column of a table.
func unit(u string) dashboard.DynamicConfigValue {
	return dashboard.DynamicConfigValue{Id: "unit", Value: u}
}

func colorBackground() dashboard.DynamicConfigValue {
	return dashboard.DynamicConfigValue{Id: "custom.cellOptions", Value: map[string]any{"type": "color-background"}}
}

func colorText() dashboard.DynamicConfigValue {
	return dashboard.DynamicConfigValue{Id: "custom.cellOptions", Value: map[string]any{"type": "color-text"}}
}

// gaugeCell draws a cell as a bar, coloured by the column's thresholds,
// between the column's min and max.
func gaugeCell() dashboard.DynamicConfigValue {
	return dashboard.DynamicConfigValue{Id: "custom.cellOptions", Value: map[string]any{"type": "gauge", "mode": "basic"}}
}

// fieldMin and fieldMax bound a column's values, for gauge cells.
func fieldMin(v float64) dashboard.DynamicConfigValue {
	return dashboard.DynamicConfigValue{Id: "min", Value: v}
}

func fieldMax(v float64) dashboard.DynamicConfigValue {
	return dashboard.DynamicConfigValue{Id: "max", Value: v}
}

func mappings(m []dashboard.ValueMapping) dashboard.DynamicConfigValue {
	return dashboard.DynamicConfigValue{Id: "mappings", Value: m}
}

func thresholds(steps ...dashboard.Threshold) dashboard.DynamicConfigValue {
	return dashboard.DynamicConfigValue{Id: "thresholds", Value: dashboard.ThresholdsConfig{Mode: dashboard.ThresholdsModeAbsolute, Steps: steps}}
}

func thresholdsBuilder(steps ...dashboard.Threshold) *dashboard.ThresholdsConfigBuilder {
	return dashboard.NewThresholdsConfigBuilder().Mode(dashboard.ThresholdsModeAbsolute).Steps(steps)
}

// step is a threshold from value on; base is the colour below the first.
func step(value float64, color string) dashboard.Threshold {
	return dashboard.Threshold{Value: cog.ToPtr(value), Color: color}
}

func base(color string) dashboard.Threshold { return dashboard.Threshold{Color: color} }

// stateMap colours state words the way zpool status reads: healthy green,
// degraded orange, gone red, offline blue (an operator's choice),
// suspended purple (I/O is blocked); spares avail green and inuse yellow.
func stateMap() []dashboard.ValueMapping {
	return textMap([][3]string{
		{"online", "ONLINE", "green"},
		{"degraded", "DEGRADED", "orange"},
		{"faulted", "FAULTED", "red"},
		{"unavail", "UNAVAIL", "red"},
		{"removed", "REMOVED", "red"},
		{"offline", "OFFLINE", "blue"},
		{"suspended", "SUSPENDED", "purple"},
		{"avail", "AVAIL", "green"},
		{"inuse", "INUSE", "yellow"},
	})
}

// scanStateMap colours zfs_scan_state's state label.
func scanStateMap() []dashboard.ValueMapping {
	return textMap([][3]string{
		{"scanning", "scanning", "blue"},
		{"paused", "paused", "orange"},
		{"finished", "finished", "green"},
		{"canceled", "canceled", "red"},
	})
}

func textMap(rows [][3]string) []dashboard.ValueMapping {
	opts := map[string]dashboard.ValueMappingResult{}
	for i, r := range rows {
		opts[r[0]] = dashboard.ValueMappingResult{Text: cog.ToPtr(r[1]), Color: cog.ToPtr(r[2]), Index: cog.ToPtr(int32(i))}
	}
	return []dashboard.ValueMapping{{ValueMap: &dashboard.ValueMap{Type: dashboard.MappingTypeValueToText, Options: opts}}}
}

// sortBy sorts a table by a column's shown title.
func sortBy(title string) []cog.Builder[common.TableSortByFieldState] {
	return []cog.Builder[common.TableSortByFieldState]{common.NewTableSortByFieldStateBuilder().DisplayName(title)}
}

// sortByDesc sorts a table by a column's shown title, highest first.
func sortByDesc(title string) []cog.Builder[common.TableSortByFieldState] {
	return []cog.Builder[common.TableSortByFieldState]{common.NewTableSortByFieldStateBuilder().DisplayName(title).Desc(true)}
}
