package kstat

import (
	"io"
	"strings"

	"github.com/zpool-exporter/zpool_exporter/internal/parse"
)

// SysctlStat is one FreeBSD sysctl as `sysctl NAME...` prints it,
// "name: value". OpenZFS on FreeBSD exports its kstats as
// kstat.<module>[.<pool>].<class>.<name>[.<statistic>]: for example
// kstat.zfs.misc.arcstats.hits, kstat.zfs.tank.misc.state and
// kstat.zfs.tank.dataset.objset-0x36.nread.
type SysctlStat struct {
	Name string `json:"name"`
	// Path is Name split at its dots. A pool name may itself hold dots,
	// so the helpers of this package match names from their known parts
	// rather than by position.
	Path []string `json:"path"`
	// Value is as printed; the lines of a multi-line value (a raw kstat
	// such as kstat.zfs.tank.misc.txgs) are joined by "\n".
	Value   string  `json:"value"`
	Number  float64 `json:"number"` // Value as a number, when Numeric
	Numeric bool    `json:"numeric"`
}

// ParseSysctl reads `sysctl [-q] NAME...` output (the default "name: value"
// form, not -e or -n). Names of every tree are kept (vfs.zfs tunables
// too); callers pick what they need. A line that does not start with a
// name and ": " continues the previous value. Blank lines are skipped.
func ParseSysctl(r io.Reader) ([]SysctlStat, error) {
	lines, err := readLines(r)
	if err != nil {
		return nil, err
	}
	stats := []SysctlStat{}
	for i, line := range lines {
		if strings.TrimSpace(line) == "" {
			continue
		}
		name, value, ok := splitSysctl(line)
		if !ok {
			if len(stats) == 0 {
				return nil, parse.Errorf(i+1, "want %q, got %q", "name: value", line)
			}
			last := &stats[len(stats)-1]
			if last.Value != "" {
				last.Value += "\n"
			}
			last.Value += line
			last.Number, last.Numeric = 0, false
			continue
		}
		s := SysctlStat{Name: name, Path: strings.Split(name, "."), Value: value}
		s.Number, s.Numeric = parseNumber(value)
		stats = append(stats, s)
	}
	return stats, nil
}

// splitSysctl splits "name: value"; the name is one word. sysctl prints a
// raw kstat's value starting with a newline, leaving "name: " alone on
// its line.
func splitSysctl(line string) (name, value string, ok bool) {
	name, value, found := strings.Cut(line, ": ")
	if !found {
		name, found = strings.CutSuffix(line, ":")
	}
	if !found || name == "" || strings.ContainsAny(name, " \t") {
		return "", "", false
	}
	return name, value, true
}

// sysctlKstat is the part of a kstat sysctl name that a helper matched.
type sysctlKstat struct {
	pool      string // "" for module-wide kstats such as arcstats
	kstat     string // "iostats", "objset-0x36"
	statistic string
}

// matchPoolKstat matches kstat.zfs.<pool>.<class>.<kstat>.<statistic> for
// a given class and kstat name prefix, from the right so that a pool name
// with dots still matches.
func matchPoolKstat(name, class, kstatPrefix string) (sysctlKstat, bool) {
	rest, ok := strings.CutPrefix(name, "kstat.zfs.")
	if !ok {
		return sysctlKstat{}, false
	}
	i := strings.LastIndex(rest, "."+class+"."+kstatPrefix)
	if i <= 0 {
		return sysctlKstat{}, false
	}
	pool := rest[:i]
	kstat, statistic, ok := strings.Cut(rest[i+len(class)+2:], ".")
	if !ok || kstat == "" || statistic == "" || strings.Contains(statistic, ".") {
		return sysctlKstat{}, false
	}
	return sysctlKstat{pool: pool, kstat: kstat, statistic: statistic}, true
}
