package kstat

import "strings"

// Names of the module-wide named kstats, besides arcstats, that the
// exporter reads. Each OS has the ones its ZFS creates: the zil and dmu_tx
// kstats come from ZFS on Linux and OpenZFS (Linux, FreeBSD 13+), abdstats
// and zfetchstats exist on illumos too.
const (
	MiscZIL      = "zil"         // intent log commits and records
	MiscDMUTx    = "dmu_tx"      // outcomes of assigning transactions to a txg
	MiscABD      = "abdstats"    // ARC buffer data: counts and sizes now
	MiscPrefetch = "zfetchstats" // the predictive prefetcher
)

// MiscKstats lists the module-wide kstats of this file, in the order the
// collector reads them.
var MiscKstats = []string{MiscZIL, MiscDMUTx, MiscABD, MiscPrefetch}

// Misc is one module-wide named kstat other than arcstats (zil, dmu_tx,
// abdstats, zfetchstats), the same shape on every OS. Stats holds each
// numeric statistic by its kernel name; a statistic a release lacks is
// absent, so that callers export no series rather than a false 0.
//
// These kstats are unsigned sums of per-CPU counters, and a sum read while
// CPUs update it can come out below zero, printed as a number near 2^64
// (a real OpenZFS 2.3 abdstats shows scatter_cnt 18446744073706144377; ZFS
// on Linux 0.7.5 zil_itx_needcopy_bytes 18446744073709537686). Such a
// statistic is left out too.
type Misc struct {
	Name  string             `json:"name"`
	Stats map[string]float64 `json:"stats"`
}

// Get returns the statistic called name.
func (m Misc) Get(name string) (float64, bool) {
	v, ok := m.Stats[name]
	return v, ok
}

// wrapped reports whether v is an unsigned counter that went below zero:
// nothing these kstats count comes near 2^63.
func wrapped(v float64) bool { return v >= 1<<63 }

// MiscFromNamed returns the kstat called name from a Linux named kstat
// (/proc/spl/kstat/zfs/<name>).
func MiscFromNamed(name string, n *Named) Misc {
	m := Misc{Name: name, Stats: map[string]float64{}}
	for _, e := range n.Entries {
		if e.Type.Numeric() && !wrapped(e.Value) {
			m.Stats[e.Name] = e.Value
		}
	}
	return m
}

// MiscFromSysctl returns the kstat called name from FreeBSD sysctl output
// (kstat.zfs.misc.<name>.*); ok is false when the output has none of it.
func MiscFromSysctl(stats []SysctlStat, name string) (m Misc, ok bool) {
	m = Misc{Name: name, Stats: map[string]float64{}}
	prefix := "kstat.zfs.misc." + name + "."
	for _, s := range stats {
		stat, found := strings.CutPrefix(s.Name, prefix)
		if !found || stat == "" || strings.Contains(stat, ".") {
			continue
		}
		ok = true
		if s.Numeric && !wrapped(s.Number) {
			m.Stats[stat] = s.Number
		}
	}
	return m, ok
}

// MiscFromKstatP returns the kstat zfs:0:<name> from illumos kstat output;
// ok is false when the output does not have it.
func MiscFromKstatP(stats []Stat, name string) (m Misc, ok bool) {
	k := Find(Group(stats), "zfs", 0, name)
	if k == nil {
		return Misc{}, false
	}
	m = Misc{Name: name, Stats: map[string]float64{}}
	for stat, v := range k.Values() {
		if !wrapped(v) {
			m.Stats[stat] = v
		}
	}
	return m, true
}
