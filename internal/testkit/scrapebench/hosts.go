package scrapebench

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/zpool-exporter/zpool_exporter/internal/testkit/hostgen"
)

// SmallHost names the host of the guest's captures, the real one.
const SmallHost = "small"

// The small host's zpool outputs are those of the guest's scenario that
// has every form the exporter asks for (a TRIM and an initialization
// running), its kstats those of the only scenario that kept them.
const (
	smallScenario = "18-trim-initialize"
	smallKstats   = "01-created"
)

// Host is one host to measure: the guest's captures, or a generated one.
type Host struct {
	Name  string
	Spec  hostgen.Spec // zero for the small host
	Label string       // for the table
}

// Leaves is how many leaves the host has in all.
func (h Host) Leaves() int { return h.Spec.Pools * h.Spec.Leaves }

// ParseHosts reads a list of hosts: "small", and POOLSxLEAVES for a
// generated host of POOLS pools of LEAVES leaves each.
func ParseHosts(list, version string) ([]Host, error) {
	var hosts []Host
	for _, name := range strings.Fields(strings.ReplaceAll(list, ",", " ")) {
		if name == SmallHost {
			hosts = append(hosts, Host{Name: name, Label: "small: the OpenZFS 2.3.2 guest's " + smallScenario + " (5 pools, 31 vdevs)"})
			continue
		}
		s, err := hostgen.ParseName(name, version)
		if err != nil {
			return nil, err
		}
		vdevs := s.Pools * (1 + s.Leaves/2 + s.Leaves)
		label := fmt.Sprintf("%d × %s leaves (%s vdevs)", s.Pools, thousands(s.Leaves), thousands(vdevs))
		if s.Datasets > 0 {
			label += fmt.Sprintf(", %s datasets, %s snapshots", thousands(s.Datasets), thousands(s.Snapshots))
		}
		hosts = append(hosts, Host{Name: name, Spec: s, Label: label})
	}
	return hosts, nil
}

// write writes the host into dir: the small host from the guest's
// captures in captureDirs, a generated one from its Spec.
func (h Host) write(dir string, captureDirs []string) error {
	if h.Name == SmallHost {
		if err := hostgen.WriteCaptures(dir, smallScenario, captureDirs...); err != nil {
			return err
		}
		if err := hostgen.AddCaptures(dir, smallKstats, captureDirs...); err != nil {
			return err
		}
		// The captures hold no events of that scenario: a queue as full
		// as a generated host's.
		pools, err := hostgen.Answer(dir, []string{"list", "-Ho", "name"})
		if err != nil {
			return err
		}
		return hostgen.WriteEvents(dir, strings.Fields(string(pools)))
	}
	return hostgen.Write(dir, h.Spec)
}

// launches are the exporters started together over a host: zpool_exporter
// through its replay and through the stand-in, pdf/zfs_exporter (when
// there) through the stand-in, and on the small host both again through a
// stand-in that takes slow to answer, as zpool did in the guest. A host
// with datasets has each through the stand-ins of zpool and zfs instead,
// ours with its cap of datasets and without, the peer with its defaults
// and with its snapshot collector.
func (h Host) launches(peer bool, slow, datasets Launch) []Launch {
	if h.Spec.Datasets > 0 {
		d := datasets
		d.Datasets = true
		ours, all := d, d
		ours.Exporter, all.Exporter, all.AllDatasets = Ours, Ours, true
		l := []Launch{ours, all}
		if peer {
			p, snapshots := d, d
			p.Exporter, snapshots.Exporter, snapshots.Snapshots = Peer, Peer, true
			l = append(l, p, snapshots)
		}
		return l
	}
	l := []Launch{{Exporter: Ours, Replay: true}, {Exporter: Ours}}
	if peer {
		l = append(l, Launch{Exporter: Peer})
	}
	if h.Name == SmallHost && slow.Delay > 0 {
		l = append(l, Launch{Exporter: Ours, Delay: slow.Delay})
		if peer {
			l = append(l, Launch{Exporter: Peer, Delay: slow.Delay})
		}
	}
	return l
}

func (h Host) dir(work string) string { return filepath.Join(work, "hosts", h.dirName()) }

// runs is the directory of the exporters' files over the host.
func (h Host) runs(work string) string { return filepath.Join(work, "runs", h.dirName()) }

// dirName is the host's name without the colons of its counts: the
// directories hold the stand-ins that PATH leads the peer to, and PATH
// takes a colon for a separator.
func (h Host) dirName() string { return strings.ReplaceAll(h.Name, ":", "_") }
