package poolconfig

import (
	"bufio"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
)

// ZdbConfig is the pool configuration that `zdb -C POOL` prints: the
// nvlist of the pool with its vdev tree.
type ZdbConfig struct {
	Name    string
	Version int // SPA version: 5000 for feature flags, 23 on zfs-fuse
	// Vdevs are the children of the root vdev: the top-level vdevs of the
	// normal, log, special and dedup classes (and holes left by removed
	// ones), in id order. Cache devices and spares are not in the tree.
	Vdevs []ZdbVdev
}

// ZdbVdev is one top-level vdev of a zdb configuration.
type ZdbVdev struct {
	ID        int
	Type      string // as zdb prints it: "mirror", "raidz", "draid", "disk", "file", "hole"...
	Path      string // for a leaf
	Ashift    int    // 0 when not printed (holes)
	NParity   int    // raidz and draid parity
	Log       bool   // is_log: 1
	AllocBias string // "special" or "dedup" for those classes
	Children  int    // direct children
}

var zdbChildRE = regexp.MustCompile(`^children\[(\d+)\]:$`)

// ParseZdbConfig reads the output of `zdb -C POOL`. zdb prints nvlists as
// "key: value" lines nested by indentation; the pool's vdev tree follows
// "vdev_tree:". When the output holds more than one configuration (the
// cached one, then the MOS one), the last is returned.
func ParseZdbConfig(r io.Reader) (ZdbConfig, error) {
	var (
		cfg, cur ZdbConfig
		started  bool
		lineNo   int
		// Indentation of the current configuration's keys, of the
		// "vdev_tree:" line, of the root's keys, and of the current
		// top-level vdev's keys; -1 when not known yet.
		cfgIndent, treeIndent, rootIndent, vdevIndent = -1, -1, -1, -1
		vdev                                          *ZdbVdev
	)
	finish := func() {
		if started {
			cfg = cur
		}
	}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	for sc.Scan() {
		lineNo++
		raw := strings.TrimRight(sc.Text(), " \t\r")
		line := strings.TrimLeft(raw, " \t")
		if line == "" {
			continue
		}
		indent := len(raw) - len(line)
		key, value, hasColon := strings.Cut(line, ":")
		if !hasColon {
			continue // headings without a colon, error text
		}
		value = unquote(strings.TrimSpace(value))

		// A line as little indented as the tree's own ends it.
		if treeIndent >= 0 && indent <= treeIndent {
			treeIndent, rootIndent, vdevIndent, vdev = -1, -1, -1, nil
		}
		switch {
		case treeIndent < 0:
			if key == "MOS Configuration" || (indent == 0 && value == "") {
				// A new configuration: "MOS Configuration:" or a
				// cached pool's "tank:".
				finish()
				cur, started, cfgIndent = ZdbConfig{}, true, -1
				continue
			}
			if cfgIndent < 0 {
				cfgIndent = indent
			}
			if indent != cfgIndent {
				continue
			}
			started = true
			switch key {
			case "name":
				cur.Name = value
			case "version":
				v, err := strconv.Atoi(value)
				if err != nil {
					return ZdbConfig{}, fmt.Errorf("line %d: version %q is not a number", lineNo, value)
				}
				cur.Version = v
			case "vdev_tree":
				treeIndent = indent
			}
		case rootIndent < 0 || indent == rootIndent:
			rootIndent = indent
			vdev, vdevIndent = nil, -1
			if m := zdbChildRE.FindStringSubmatch(line); m != nil {
				id, _ := strconv.Atoi(m[1])
				cur.Vdevs = append(cur.Vdevs, ZdbVdev{ID: id})
				vdev = &cur.Vdevs[len(cur.Vdevs)-1]
			}
		case vdev != nil:
			if vdevIndent < 0 {
				vdevIndent = indent
			}
			if indent != vdevIndent {
				continue // the vdev's children's own keys
			}
			if err := vdev.set(key, value, line); err != nil {
				return ZdbConfig{}, fmt.Errorf("line %d: %w", lineNo, err)
			}
		}
	}
	if err := sc.Err(); err != nil {
		return ZdbConfig{}, fmt.Errorf("line %d: %w", lineNo+1, err)
	}
	finish()
	if cfg.Vdevs == nil {
		return ZdbConfig{}, fmt.Errorf("no vdev_tree with children in zdb output")
	}
	return cfg, nil
}

func (v *ZdbVdev) set(key, value, line string) error {
	number := func() (int, error) {
		n, err := strconv.Atoi(value)
		if err != nil {
			return 0, fmt.Errorf("%s %q is not a number", key, value)
		}
		return n, nil
	}
	var err error
	switch {
	case zdbChildRE.MatchString(line):
		v.Children++
	case key == "id":
		v.ID, err = number()
	case key == "type":
		v.Type = value
	case key == "path":
		v.Path = value
	case key == "ashift":
		v.Ashift, err = number()
	case key == "nparity":
		v.NParity, err = number()
	case key == "is_log":
		var n int
		n, err = number()
		v.Log = n != 0
	case key == "alloc_bias":
		v.AllocBias = value
	}
	return err
}

func unquote(s string) string {
	if len(s) >= 2 && s[0] == '\'' && s[len(s)-1] == '\'' {
		return s[1 : len(s)-1]
	}
	return s
}
