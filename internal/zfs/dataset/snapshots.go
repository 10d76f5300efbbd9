package dataset

import "strings"

// Snapshots is what the snapshots of one dataset add up to.
type Snapshots struct {
	Count int
	// Oldest and Newest are the creation times of the oldest and newest
	// snapshot, in Unix seconds; 0 when no snapshot's creation was read.
	Oldest, Newest float64
	// Used is the sum of the snapshots' used: the space each alone holds.
	// What they hold together, blocks shared between snapshots included,
	// is the dataset's usedbysnapshots.
	Used float64
}

// SummarizeSnapshots sums up the snapshots of l, a listing of snapshots
// with creation and used among its properties, by the dataset each
// belongs to: its name before the "@". A name without "@" is not a
// snapshot and is left out.
func SummarizeSnapshots(l *List) map[string]Snapshots {
	creation, used := l.Column("creation"), l.Column("used")
	sums := map[string]Snapshots{}
	for _, d := range l.Datasets {
		name, _, ok := strings.Cut(d.Name, "@")
		if !ok {
			continue
		}
		s, seen := sums[name]
		if !seen {
			// A key of its own, not a piece of the listing's output,
			// which the summary outlives.
			name = strings.Clone(name)
		}
		s.Count++
		if t, ok := Number(d.Value(creation)); ok {
			if s.Oldest == 0 || t < s.Oldest {
				s.Oldest = t
			}
			s.Newest = max(s.Newest, t)
		}
		if u, ok := Number(d.Value(used)); ok {
			s.Used += u
		}
		sums[name] = s
	}
	return sums
}
