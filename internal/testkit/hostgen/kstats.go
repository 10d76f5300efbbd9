package hostgen

import (
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// rows24Kstats are the statistics OpenZFS 2.4.4 added to the kstats of
// 2.3.2 that the exporter reads: arcstats' l2_ndev, and the count of ZIL
// commits that fell back after a crash in zil and each objset.
var rows24Kstats = []string{"l2_ndev", "zil_commit_crash_count"}

// kstatFiles returns the files of kstat/, a copy of /proc/spl/kstat/zfs:
// the module-wide kstats, and each pool's state, iostats, txgs and the
// objset of its root dataset.
func kstatFiles(h host) map[string]string {
	named := func(text string) string {
		if h.spec.Version == "2.3" {
			return withoutStatistics(text, rows24Kstats...)
		}
		return text
	}
	files := map[string]string{
		"arcstats":    named(arcstatsKstat),
		"zil":         named(zilKstat),
		"dmu_tx":      named(dmuTxKstat),
		"abdstats":    named(abdKstat),
		"zfetchstats": named(zfetchKstat),
	}
	for _, p := range h.pools {
		files[filepath.Join(p.name, "state")] = "ONLINE\n"
		files[filepath.Join(p.name, "iostats")] = named(poolIostatsKstat)
		files[filepath.Join(p.name, "txgs")] = poolTxgsKstat
		files[filepath.Join(p.name, "objset-0x36")] = named(strings.ReplaceAll(poolObjsetKstat, "{pool}", p.name))
	}
	return files
}

// namedKstatBytes is the size of one statistic in a named kstat's header
// (kstat_named_t).
const namedKstatBytes = 272

// withoutStatistics removes statistics from a named kstat, and counts
// them out of its header's number of statistics and data size.
func withoutStatistics(text string, names ...string) string {
	lines := strings.SplitAfter(text, "\n")
	var b strings.Builder
	removed := 0
	for _, line := range lines[1:] {
		if f := strings.Fields(line); len(f) > 0 && slices.Contains(names, f[0]) {
			removed++
			continue
		}
		b.WriteString(line)
	}
	header := strings.Fields(lines[0])
	if removed == 0 || len(header) != 7 {
		return text
	}
	ndata, _ := strconv.Atoi(header[3])
	size, _ := strconv.Atoi(header[4])
	header[3] = strconv.Itoa(ndata - removed)
	header[4] = strconv.Itoa(size - removed*namedKstatBytes)
	return fmt.Sprintln(strings.Join(header, " ")) + b.String()
}
