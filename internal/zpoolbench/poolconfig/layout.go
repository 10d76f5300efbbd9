package poolconfig

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/zpool-exporter/zpool_exporter/internal/zfs/zpool"
)

// topLevelVdevs lists the top-level vdevs of a pool from its status tree.
func topLevelVdevs(p *zpool.Pool) []Vdev {
	if p.Root == nil {
		return nil
	}
	vdevs := make([]Vdev, 0, len(p.Root.Children))
	for _, v := range p.Root.Children {
		vdevs = append(vdevs, Vdev{
			Name:  v.Name,
			Type:  v.Type,
			Class: v.Class,
			Width: positions(v),
			State: v.State,
		})
	}
	return vdevs
}

// positions counts the leaves under a vdev, a leaf counting itself. A
// replacing or spare vdev is one position of its parent, whatever number
// of disks it holds while a replacement or a hot spare is in progress.
func positions(v *zpool.Vdev) int {
	if len(v.Children) == 0 || v.Type == "replacing" || v.Type == "spare" {
		return 1
	}
	n := 0
	for _, c := range v.Children {
		n += positions(c)
	}
	return n
}

// kind is what Layout calls a top-level vdev: "" for a single disk (or a
// disk being replaced or spared), "mirror", "raidz2", a dRAID's full
// specification ("draid1:4d:11c:1s"); ok is false for what holds no data
// (holes, indirect vdevs of removed ones, missing ones).
func kind(v Vdev) (k string, ok bool) {
	switch v.Type {
	case "hole", "indirect", "missing":
		return "", false
	case "disk", "file", "replacing", "spare", "dspare":
		return "", true
	case "":
		return "vdev", true
	}
	if strings.HasPrefix(v.Type, "draid") {
		if i := strings.LastIndexByte(v.Name, '-'); i > 0 && strings.Contains(v.Name[:i], ":") {
			return v.Name[:i], true
		}
	}
	return v.Type, true
}

// layoutClasses are the classes in the order Layout lists them.
var layoutClasses = []string{
	zpool.ClassNormal, zpool.ClassSpecial, zpool.ClassDedup,
	zpool.ClassLog, zpool.ClassCache, zpool.ClassSpare,
}

type vdevGroup struct {
	kind  string
	width int
	count int
}

// Layout sums up top-level vdevs in one line: "2 × mirror of 2",
// "raidz1 of 3", "stripe of 4", "raidz2 of 6 + log mirror of 2 + cache 1 +
// spare 1". Identical vdevs are counted; a mix lists each kind in order of
// first appearance ("mirror of 2 + mirror of 3", "2 × mirror of 2 +
// disk"). Single disks of the data class are a stripe when they are all
// there is; in other classes they are counted ("log 2").
func Layout(vdevs []Vdev) string {
	var parts []string
	for _, class := range layoutClasses {
		var groups []vdevGroup
		for _, v := range vdevs {
			if v.Class != class {
				continue
			}
			k, ok := kind(v)
			if !ok {
				continue
			}
			width := v.Width
			if k == "" {
				width = 1
			}
			found := false
			for i := range groups {
				if groups[i].kind == k && (k == "" || groups[i].width == width) {
					groups[i].count++
					found = true
					break
				}
			}
			if !found {
				groups = append(groups, vdevGroup{kind: k, width: width, count: 1})
			}
		}
		if len(groups) == 0 {
			continue
		}
		if class == zpool.ClassNormal {
			if len(groups) == 1 && groups[0].kind == "" {
				parts = append(parts, "stripe of "+strconv.Itoa(groups[0].count))
				continue
			}
			for _, g := range groups {
				if g.kind == "" {
					parts = append(parts, times(g.count, "disk"))
				} else {
					parts = append(parts, times(g.count, fmt.Sprintf("%s of %d", g.kind, g.width)))
				}
			}
			continue
		}
		for _, g := range groups {
			if g.kind == "" {
				parts = append(parts, class+" "+strconv.Itoa(g.count))
			} else {
				parts = append(parts, class+" "+times(g.count, fmt.Sprintf("%s of %d", g.kind, g.width)))
			}
		}
	}
	return strings.Join(parts, " + ")
}

func times(n int, what string) string {
	if n == 1 {
		return what
	}
	return strconv.Itoa(n) + " × " + what
}
