package kstat

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/zpool-exporter/zpool_exporter/internal/parse"
)

// Stat is one statistic printed by illumos or Solaris kstat(1M).
type Stat struct {
	Module    string `json:"module"`    // "zfs"
	Instance  int    `json:"instance"`  // 0
	Name      string `json:"name"`      // "arcstats", or a pool name for its I/O kstat
	Statistic string `json:"statistic"` // "hits"; also "class", "crtime" and "snaptime"
	Value     string `json:"value"`     // as printed
	// Number is Value read as a number when Numeric. High-resolution
	// times (crtime, snaptime, and the wtime ... rlastupdate of I/O
	// kstats) are printed, and read, in seconds.
	Number  float64 `json:"number"`
	Numeric bool    `json:"numeric"`
}

func newStat(module string, instance int, name, statistic, value string) Stat {
	s := Stat{Module: module, Instance: instance, Name: name, Statistic: statistic, Value: value}
	s.Number, s.Numeric = parseNumber(value)
	return s
}

// ParseKstatP reads `kstat -p` output: "module:instance:name:statistic",
// a tab, and the value, one statistic a line. A line without a tab (a paste
// that turned the tab into spaces) is split at its last run of blanks
// instead. `kstat -p -l` lines, names without values, give an empty value.
// Blank lines, which separate repeated reports (`kstat -p 5`), are skipped.
func ParseKstatP(r io.Reader) ([]Stat, error) {
	lines, err := readLines(r)
	if err != nil {
		return nil, err
	}
	stats := []Stat{}
	for i, line := range lines {
		if strings.TrimSpace(line) == "" {
			continue
		}
		key, value := splitKstatP(line)
		module, instance, name, statistic, ok := splitKstatKey(key)
		if !ok {
			return nil, parse.Errorf(i+1, "want module:instance:name:statistic, got %q", key)
		}
		n, err := strconv.Atoi(instance)
		if err != nil {
			return nil, parse.Errorf(i+1, "cannot parse instance %q", instance)
		}
		stats = append(stats, newStat(module, n, name, statistic, value))
	}
	return stats, nil
}

// splitKstatKey splits "module:instance:name:statistic". The name is all
// between the instance and the last colon: a pool's I/O kstat is named
// after the pool, and pool names may hold colons ("zfs:0:db:a:nread").
func splitKstatKey(key string) (module, instance, name, statistic string, ok bool) {
	parts := strings.SplitN(key, ":", 3)
	if len(parts) != 3 {
		return "", "", "", "", false
	}
	i := strings.LastIndexByte(parts[2], ':')
	if i < 0 {
		return "", "", "", "", false
	}
	module, instance, name, statistic = parts[0], parts[1], parts[2][:i], parts[2][i+1:]
	return module, instance, name, statistic, module != "" && name != "" && statistic != ""
}

func splitKstatP(line string) (key, value string) {
	if key, value, ok := strings.Cut(line, "\t"); ok {
		return key, value
	}
	line = strings.TrimRight(line, " ")
	if i := strings.LastIndexByte(line, ' '); i >= 0 {
		return strings.TrimRight(line[:i], " "), line[i+1:]
	}
	return line, ""
}

// ParseKstat reads the human-readable form of kstat(1M), `kstat -m zfs`:
// for each kstat a "module: ... instance: ..." line, a "name: ... class:
// ..." line, then one tab-indented "statistic  value" line a statistic and
// a blank line. It returns the same statistics `kstat -p` prints for it,
// the class included.
func ParseKstat(r io.Reader) ([]Stat, error) {
	lines, err := readLines(r)
	if err != nil {
		return nil, err
	}
	stats := []Stat{}
	var cur *Stat // module, instance and name of the kstat being read
	for i, line := range lines {
		lineNo := i + 1
		trimmed := strings.TrimSpace(line)
		switch {
		case trimmed == "":
			continue
		case strings.HasPrefix(line, "module:"):
			module, instance, err := parseModuleLine(line)
			if err != nil {
				return nil, parse.AtLine(lineNo, err)
			}
			cur = &Stat{Module: module, Instance: instance}
		case strings.HasPrefix(line, "name:"):
			if cur == nil || cur.Name != "" {
				return nil, parse.Errorf(lineNo, "%q without a module line before it", line)
			}
			name, class := parseNameLine(line)
			if name == "" {
				return nil, parse.Errorf(lineNo, "no kstat name in %q", line)
			}
			cur.Name = name
			stats = append(stats, newStat(cur.Module, cur.Instance, name, "class", class))
		default:
			if cur == nil || cur.Name == "" {
				return nil, parse.Errorf(lineNo, "statistic %q outside a kstat", trimmed)
			}
			statistic, value := splitKstatLine(trimmed)
			if strings.Contains(statistic, ":") {
				// kstat -p would print it as another name: not a statistic.
				return nil, parse.Errorf(lineNo, "statistic %q holds a colon", statistic)
			}
			stats = append(stats, newStat(cur.Module, cur.Instance, cur.Name, statistic, value))
		}
	}
	return stats, nil
}

// parseModuleLine reads "module: %-30.30s  instance: %-6d".
func parseModuleLine(line string) (module string, instance int, err error) {
	rest := strings.TrimPrefix(line, "module:")
	i := strings.LastIndex(rest, " instance:")
	if i < 0 {
		return "", 0, fmt.Errorf("want %q, got %q", "module: M  instance: N", line)
	}
	module = strings.TrimSpace(rest[:i])
	inst := strings.TrimSpace(rest[i+len(" instance:"):])
	instance, err = strconv.Atoi(inst)
	if err != nil || module == "" {
		return "", 0, fmt.Errorf("want %q, got %q", "module: M  instance: N", line)
	}
	return module, instance, nil
}

// parseNameLine reads "name:   %-30.30s  class:    %-.30s".
func parseNameLine(line string) (name, class string) {
	rest := strings.TrimPrefix(line, "name:")
	if i := strings.LastIndex(rest, " class:"); i >= 0 {
		return strings.TrimSpace(rest[:i]), strings.TrimSpace(rest[i+len(" class:"):])
	}
	return strings.TrimSpace(rest), ""
}

// splitKstatLine splits a statistic line, printed "\t%-30s  " and the
// value: the name ends at the first two blanks (statistic names may hold
// one, as in "Hard Errors").
func splitKstatLine(s string) (statistic, value string) {
	if i := strings.Index(s, "  "); i >= 0 {
		return s[:i], strings.TrimLeft(s[i:], " ")
	}
	if i := strings.IndexAny(s, " \t"); i >= 0 {
		return s[:i], strings.TrimLeft(s[i:], " \t")
	}
	return s, ""
}

// Kstat is the statistics of one illumos kstat, module:instance:name.
type Kstat struct {
	Module   string `json:"module"`
	Instance int    `json:"instance"`
	Name     string `json:"name"`
	Class    string `json:"class"` // "misc" for arcstats; "" when not printed
	// Stats are its statistics in the order printed, without class.
	Stats []Stat `json:"stats"`
}

// Group collects statistics into kstats, in the order each kstat first
// appears.
func Group(stats []Stat) []*Kstat {
	type id struct {
		module   string
		instance int
		name     string
	}
	var kstats []*Kstat
	byID := map[id]*Kstat{}
	for _, s := range stats {
		k := id{s.Module, s.Instance, s.Name}
		ks := byID[k]
		if ks == nil {
			ks = &Kstat{Module: s.Module, Instance: s.Instance, Name: s.Name}
			byID[k] = ks
			kstats = append(kstats, ks)
		}
		if s.Statistic == "class" {
			ks.Class = s.Value
			continue
		}
		ks.Stats = append(ks.Stats, s)
	}
	return kstats
}

// Find returns the kstat module:instance:name, or nil.
func Find(kstats []*Kstat, module string, instance int, name string) *Kstat {
	for _, k := range kstats {
		if k.Module == module && k.Instance == instance && k.Name == name {
			return k
		}
	}
	return nil
}

// Lookup returns the statistic called name.
func (k *Kstat) Lookup(name string) (Stat, bool) {
	for _, s := range k.Stats {
		if s.Statistic == name {
			return s, true
		}
	}
	return Stat{}, false
}

// Values returns the numeric statistics by name, without the crtime and
// snaptime every kstat carries.
func (k *Kstat) Values() map[string]float64 {
	v := make(map[string]float64, len(k.Stats))
	for _, s := range k.Stats {
		if s.Numeric && s.Statistic != "crtime" && s.Statistic != "snaptime" {
			v[s.Statistic] = s.Number
		}
	}
	return v
}

// isIO reports whether k has the statistics of a KSTAT_TYPE_IO kstat.
func (k *Kstat) isIO() bool {
	_, nread := k.Lookup("nread")
	_, wlentime := k.Lookup("wlentime")
	return nread && wlentime
}

// IOFromKstat reads an I/O kstat as kstat(1M) prints it: byte and
// operation counts as integers, times in seconds.
func IOFromKstat(k *Kstat) (IO, error) {
	var c IO
	for _, s := range k.Stats {
		switch s.Statistic {
		case "crtime", "snaptime":
			continue
		case "wtime", "wlentime", "wlastupdate", "rtime", "rlentime", "rlastupdate":
			d, ok := parseSeconds(s.Value)
			if !ok {
				return IO{}, parse.Errorf(0, "%s:%d:%s: cannot parse %s %q", k.Module, k.Instance, k.Name, s.Statistic, s.Value)
			}
			c.set(s.Statistic, 0, d)
		default:
			v, err := strconv.ParseUint(s.Value, 10, 64)
			if err != nil {
				continue // not an I/O counter
			}
			c.set(s.Statistic, v, time.Duration(v))
		}
	}
	return c, nil
}

// parseSeconds reads the seconds kstat prints for a high-resolution time
// ("%.9f", or "0") exactly, without a trip through float64, which cannot
// hold every nanosecond of a large wlentime.
func parseSeconds(s string) (time.Duration, bool) {
	if !isDecimal(s) || strings.HasPrefix(s, "-") {
		return 0, false
	}
	whole, frac, _ := strings.Cut(s, ".")
	if len(frac) > 9 {
		frac = frac[:9]
	}
	sec, err := strconv.ParseInt(whole, 10, 64)
	if err != nil || sec > math.MaxInt64/int64(time.Second)-1 {
		return 0, false
	}
	ns := int64(0)
	if frac != "" {
		ns, _ = strconv.ParseInt(frac+strings.Repeat("0", 9-len(frac)), 10, 64)
	}
	return time.Duration(sec)*time.Second + time.Duration(ns), true
}
