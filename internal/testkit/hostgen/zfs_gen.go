package hostgen

import (
	"bufio"
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The datasets of a generated host. Each pool of n datasets has its root
// dataset, then about sqrt(n) children ds01..., under which most of the
// others are filesystems fs0001... (one in 40 a volume, vol0001...), and a
// fifth grandchildren sub0001... of those filesystems. One in 20
// filesystems has a quota, one in 30 a refquota, one in 50 a
// refreservation, one dataset in 40 a reservation; seven volumes in ten
// have their refreservation (thick), the others are sparse; every third
// pool compresses with lz4, which its datasets inherit, and some datasets
// set zstd, gzip or off; one or two datasets without children are
// encrypted; a few with snapshots have a snapshot_limit. Pools are
// mounted under /mnt/POOL, which their children inherit, as in the
// guest's captures of 2.4.
//
// Snapshots go to about a third of the datasets, unevenly (Zipf: a few
// datasets have thousands, most of them a handful, the others none),
// named auto-YYYY-MM-DD_HHMM, spread evenly over the last 90 days (or
// since the dataset's creation). Sizes add up as zfs adds them: used is
// usedbydataset, usedbychildren, usedbysnapshots and
// usedbyrefreservation; a parent's usedbychildren is its children's used
// or reservation; available falls under a quota and rises by an unused
// reservation. They are the datasets' own: the generated pools' figures
// (a few MB allocated) are not made to hold them.

// snapshotDays is how far back snapshots go.
const snapshotDays = 90

type genDataset struct {
	name     string
	pool     int
	parent   int // -1 for a pool's root
	children []int
	volume   bool
	created  int64 // seconds
	poolMade int64 // when its pool was created, at txg 1
	txg      int64
	objsetid int64

	// Settings, with their sources where not zfsPropTable's.
	quota, refquota, reservation, refreservation, volsize int64
	compression, compressionSource                        string
	mountpoint, mountpointSource                          string
	encryption, keylocation, keyformat, encryptionRoot    string
	pbkdf2iters                                           int64
	snapshotLimit                                         int64 // -1: none

	// Space.
	refer, logicalRefer, ratioPct                    int64
	usedSnap, usedChild, usedRefres, used, logicalUs int64
	written, avail, base                             int64
	snaps                                            []genSnapshot
}

type genSnapshot struct {
	name                               string // from "@"
	created, txg, objsetid             int64
	used, refer, written, logicalRefer int64
}

// genHost makes the datasets of the host, in zfs's order.
func genHost(h host, now time.Time) ([]*genDataset, error) {
	s := h.spec
	rng := rand.New(rand.NewPCG(uint64(s.Pools)<<32|uint64(s.Datasets), uint64(s.Snapshots)))
	anchor := now.UTC().Truncate(24 * time.Hour).Unix()
	var all []*genDataset
	for p := range h.pools {
		n := s.Datasets / s.Pools
		if p < s.Datasets%s.Pools {
			n++
		}
		created := anchor - (snapshotDays+30)*86400 + int64(p)*3600
		all = genPool(all, h.pools[p].name, p, n, created, anchor, rng)
	}
	encrypt(all, s.Datasets)
	if err := spreadSnapshots(all, s.Snapshots, anchor, rng); err != nil {
		return nil, err
	}
	for i := len(all) - 1; i >= 0; i-- { // children come after their parents
		genSpace(all, i, rng)
	}
	for _, d := range all {
		if d.parent < 0 {
			d.base = max(d.used/2, 256<<30) / 4096 * 4096
			d.avail = d.base
		}
	}
	for _, d := range all { // parents first
		for _, c := range d.children {
			genAvail(all[c], d)
		}
	}
	numberObjsets(all)
	slices.SortStableFunc(all, func(a, b *genDataset) int { return strings.Compare(a.name, b.name) })
	return all, nil
}

// genPool adds a pool's n datasets, its root first.
func genPool(all []*genDataset, pool string, p, n int, created, anchor int64, rng *rand.Rand) []*genDataset {
	add := func(name string, parent int, volume bool, at int64) int {
		d := &genDataset{name: name, pool: p, parent: parent, volume: volume, created: at, poolMade: created, snapshotLimit: -1,
			compression: "on", compressionSource: "default", encryption: "off", keylocation: "none", keyformat: "none", encryptionRoot: "-"}
		if parent >= 0 {
			par := all[parent]
			par.children = append(par.children, len(all))
			d.created = max(at, par.created+60)
		}
		d.txg = 1 + (d.created-created)/30
		all = append(all, d)
		return len(all) - 1
	}
	root := add(pool, -1, false, created)
	m := n - 1
	if m == 0 {
		return finishPool(all, root)
	}
	level1 := min(m, int(math.Ceil(math.Sqrt(float64(m)))))
	rest := m - level1
	level3 := rest / 5
	level2 := rest - level3
	var l1, l2fs []int
	w1 := digits(level1, 2)
	for i := range level1 {
		l1 = append(l1, add(fmt.Sprintf("%s/ds%0*d", pool, w1, i+1), root, false, created+int64(i+1)*600))
	}
	// Later datasets were made in the month after the pool, and a tenth
	// of them during the last 90 days.
	when := func() int64 {
		if rng.IntN(10) == 0 {
			return anchor - rng.Int64N(snapshotDays*86400)
		}
		return created + 86400 + rng.Int64N(29*86400)
	}
	w2 := digits(level2, 4)
	for i := range level2 {
		parent := l1[int(float64(level1)*math.Pow(rng.Float64(), 1.5))]
		if i%40 == 3 {
			add(fmt.Sprintf("%s/vol%0*d", all[parent].name, w2, i+1), parent, true, when())
			continue
		}
		l2fs = append(l2fs, add(fmt.Sprintf("%s/fs%0*d", all[parent].name, w2, i+1), parent, false, when()))
	}
	if len(l2fs) == 0 {
		l2fs = l1
	}
	w3 := digits(level3, 4)
	for i := range level3 {
		parent := l2fs[int(float64(len(l2fs))*math.Pow(rng.Float64(), 2))]
		add(fmt.Sprintf("%s/sub%0*d", all[parent].name, w3, i+1), parent, false, when())
	}
	return finishPool(all, root)
}

// finishPool gives the pool's datasets their settings, from the root down.
func finishPool(all []*genDataset, root int) []*genDataset {
	for i := root; i < len(all); i++ {
		d := all[i]
		k := i - root
		if d.parent < 0 {
			d.mountpoint, d.mountpointSource = "/mnt/"+d.name, "local"
			if d.pool%3 == 1 {
				d.compression, d.compressionSource = "lz4", "local"
			}
			continue
		}
		par := all[d.parent]
		// Inherited, unless set below.
		d.compression, d.compressionSource = par.compression, par.compressionSource
		if par.compressionSource == "local" {
			d.compressionSource = "inherited from " + par.name
		}
		switch {
		case k%25 == 0:
			d.compression, d.compressionSource = "zstd", "local"
		case k%61 == 0:
			d.compression, d.compressionSource = "gzip", "local"
		case k%83 == 0:
			d.compression, d.compressionSource = "off", "local"
		}
		if d.volume {
			d.volsize = []int64{1, 2, 4, 8, 16, 32, 64, 100}[k%8] << 30
			if k%10 < 7 {
				d.refreservation = zvolReservation(d.volsize, 16384)
			}
		} else {
			d.mountpoint = strings.Replace(d.name, all[root].name, all[root].mountpoint, 1)
			d.mountpointSource = "inherited from " + all[root].name
			if k%50 == 17 {
				d.refreservation = int64(1+k%4) << 30
			}
		}
		if k%40 == 13 {
			d.reservation = int64(1+k%10) << 30
		}
	}
	return all
}

// encrypt makes one dataset without children of the first pool, and of
// the last pool on a host of a thousand datasets or more, encrypted: the
// first by a passphrase, the second by a key file.
func encrypt(all []*genDataset, datasets int) {
	pick := func(pool int, last bool) *genDataset {
		var found *genDataset
		for _, d := range all {
			if d.pool == pool && d.parent >= 0 && !d.volume && len(d.children) == 0 {
				found = d
				if !last {
					break
				}
			}
		}
		return found
	}
	if d := pick(0, false); d != nil {
		d.encryption, d.keyformat, d.keylocation, d.pbkdf2iters = "aes-256-gcm", "passphrase", "prompt", 350000
		d.encryptionRoot = d.name
	}
	if datasets >= 1000 {
		if d := pick(all[len(all)-1].pool, true); d != nil && d.encryption == "off" {
			d.encryption, d.keyformat = "aes-256-gcm", "raw"
			d.keylocation = "file:///etc/zfs/keys/" + strings.ReplaceAll(d.name, "/", "_") + ".key"
			d.encryptionRoot = d.name
		}
	}
}

// spreadSnapshots gives n snapshots to about a third of the datasets (to
// all of them if they take no fewer), in Zipf's proportions, at most one
// a minute since each was created or 90 days.
func spreadSnapshots(all []*genDataset, n int, anchor int64, rng *rand.Rand) error {
	if n == 0 {
		return nil
	}
	start := func(d *genDataset) int64 { return max(d.created+3600, anchor-snapshotDays*86400) }
	room := func(d *genDataset) int { return int(max(0, (anchor-start(d))/60)) }
	order := rng.Perm(len(all))
	roomIn := func(with int) int {
		total := 0
		for _, i := range order[:with] {
			total += room(all[i])
		}
		return total
	}
	with := min(len(all), n, max(1, (len(all)+2)/3))
	if roomIn(with) < n {
		with = len(all)
	}
	if roomIn(with) < n {
		return fmt.Errorf("%d snapshots do not fit in %d datasets, at most one a minute over %d days", n, len(all), snapshotDays)
	}
	order = order[:with]
	counts := make([]int, with)
	weights := make([]float64, with)
	total := 0.0
	for r := range with {
		weights[r] = 1 / math.Pow(float64(r+1), 0.9)
		total += weights[r]
	}
	left := n
	for r := range with {
		counts[r] = min(room(all[order[r]]), int(float64(n)*weights[r]/total))
		left -= counts[r]
	}
	for left > 0 { // what rounding and the room left over, one at a time
		for r := 0; r < with && left > 0; r++ {
			if counts[r] < room(all[order[r]]) {
				counts[r]++
				left--
			}
		}
	}
	for r, i := range order {
		d := all[i]
		k := counts[r]
		from := start(d)
		span := anchor - from
		for j := range k {
			t := (from + span*int64(2*j+1)/int64(2*k)) / 60 * 60
			d.snaps = append(d.snaps, genSnapshot{
				name:    "@auto-" + time.Unix(t, 0).UTC().Format("2006-01-02_1504"),
				created: t,
				txg:     1 + (t-d.poolMade)/30,
			})
		}
	}
	return nil
}

// genSpace sizes a dataset, whose children are sized already.
func genSpace(all []*genDataset, i int, rng *rand.Rand) {
	d := all[i]
	logUniform := func(lo, hi float64) int64 {
		return int64(math.Exp(math.Log(lo)+rng.Float64()*(math.Log(hi)-math.Log(lo)))) / 512 * 512
	}
	switch {
	case d.volume:
		d.refer = int64(float64(d.volsize)*(0.02+0.78*rng.Float64())) / 512 * 512
	case d.parent < 0:
		d.refer = logUniform(96<<10, 256<<20)
	default:
		d.refer = logUniform(96<<10, 16<<30)
	}
	switch {
	case d.compression == "off" || rng.IntN(10) < 3:
		d.ratioPct = 100 + rng.Int64N(6)
	case d.compression == "zstd":
		d.ratioPct = 120 + rng.Int64N(230)
	case d.compression == "gzip":
		d.ratioPct = 150 + rng.Int64N(250)
	default:
		d.ratioPct = 100 + rng.Int64N(150)
	}
	if d.compression == "off" {
		d.ratioPct = 100
	}
	d.logicalRefer = d.refer * d.ratioPct / 100 / 512 * 512
	prev := int64(0)
	for j := range d.snaps {
		sn := &d.snaps[j]
		frac := float64(j+1) / float64(len(d.snaps))
		sn.refer = int64(float64(d.refer)*(0.55+0.45*frac)) / 512 * 512
		if rng.IntN(100) >= 35 {
			sn.used = logUniform(4096, max(8192, float64(d.refer)/50))
		}
		sn.written = sn.refer
		if j > 0 {
			sn.written = max(sn.refer-prev, 0) + sn.used
		}
		prev = sn.refer
		sn.logicalRefer = sn.refer * d.ratioPct / 100 / 512 * 512
		d.usedSnap += sn.used
	}
	if len(d.snaps) >= 2 {
		d.usedSnap += d.refer / 40 / 512 * 512
	}
	d.written = d.refer
	if len(d.snaps) > 0 {
		d.written = 0
		if rng.IntN(5) > 0 {
			d.written = logUniform(4096, max(8192, float64(d.refer)/20))
		}
		if !d.volume && len(d.children) == 0 && i%100 == 3 {
			d.snapshotLimit = int64(len(d.snaps) + 50 + rng.IntN(450))
		}
	}
	d.usedRefres = max(0, d.refreservation-d.refer)
	logicalChildren := int64(0)
	for _, c := range d.children {
		d.usedChild += max(all[c].used, all[c].reservation)
		logicalChildren += all[c].logicalUs
	}
	d.used = d.refer + d.usedChild + d.usedSnap + d.usedRefres
	d.logicalUs = d.logicalRefer + logicalChildren + d.usedSnap*d.ratioPct/100
	if !d.volume && d.parent >= 0 {
		if i%20 == 7 {
			d.quota = roundUp(d.used*int64(13+rng.IntN(28))/10, 1<<30)
		}
		if i%30 == 11 {
			d.refquota = roundUp(d.refer*int64(12+rng.IntN(19))/10, 1<<30)
		}
	}
}

// genAvail sets a child's available space from its parent's.
func genAvail(d, parent *genDataset) {
	d.base = parent.base
	if parent.quota > 0 {
		d.base = min(d.base, parent.quota-parent.used)
	}
	avail := d.base
	if d.quota > 0 {
		avail = min(avail, d.quota-d.used)
	}
	if d.refquota > 0 {
		avail = min(avail, d.refquota-d.refer)
	}
	d.avail = max(0, avail+max(0, d.reservation-d.used)+d.usedRefres)
}

// numberObjsets numbers the objsets of each pool: the root's is 0x36, as
// the kstat of the pool's root dataset has it, then the datasets' and
// the snapshots' in the order they were made.
func numberObjsets(all []*genDataset) {
	type made struct {
		at  int64
		set *int64
	}
	byPool := map[int][]made{}
	for _, d := range all {
		if d.parent < 0 {
			d.objsetid = 0x36
		} else {
			byPool[d.pool] = append(byPool[d.pool], made{d.created, &d.objsetid})
		}
		for j := range d.snaps {
			byPool[d.pool] = append(byPool[d.pool], made{d.snaps[j].created, &d.snaps[j].objsetid})
		}
	}
	for _, list := range byPool {
		slices.SortStableFunc(list, func(a, b made) int { return cmp.Compare(a.at, b.at) })
		for i, m := range list {
			*m.set = 0x80 + 3*int64(i)
		}
	}
}

// zvolReservation is the refreservation zfs gives a volume of a size that
// is not sparse (zvol_volsize_to_reservation of libzfs, one copy, a pool
// without raidz).
func zvolReservation(volsize, blocksize int64) int64 {
	nblocks := volsize / blocksize
	numdb := int64(7)
	for nblocks > 1 {
		nblocks = (nblocks + 1023) / 1024
		numdb += nblocks
	}
	return volsize + numdb*2*(1<<17)
}

func roundUp(n, unit int64) int64 { return (n + unit - 1) / unit * unit }

// digits is how many digits numbering n things takes, at least least.
func digits(n, least int) int { return max(least, len(strconv.Itoa(n))) }

// Columns of the files; the others come from zfsPropTable.
var (
	datasetColumns = []string{"type", "createtxg", "creation", "used", "available", "referenced", "compressratio",
		"refcompressratio", "usedbysnapshots", "usedbydataset", "usedbychildren", "usedbyrefreservation", "written",
		"logicalused", "logicalreferenced", "quota", "refquota", "reservation", "refreservation", "volsize",
		"mountpoint", "compression", "objsetid", "encryption", "keylocation", "keyformat", "pbkdf2iters",
		"encryptionroot", "keystatus", "snapshot_limit", "snapshot_count", "snapshots_changed"}
	snapshotColumns = []string{"createtxg", "creation", "used", "referenced", "compressratio", "written",
		"logicalreferenced", "objsetid"}
)

// writeZFS writes the host's datasets and snapshots under dir/zfs.
func writeZFS(dir string, h host, now time.Time) error {
	all, err := genHost(h, now)
	if err != nil {
		return err
	}
	version := h.spec.Version
	err = writeWith(filepath.Join(dir, zfsDir, datasetsFile), func(w *bufio.Writer) {
		t := zfsTableWriter{w, datasetColumns}
		t.header(version)
		var b []byte
		for _, d := range all {
			b = appendDataset(b[:0], d)
			w.Write(b)
		}
	})
	if err != nil || h.spec.Snapshots == 0 {
		return err
	}
	return writeWith(filepath.Join(dir, zfsDir, snapshotsFile), func(w *bufio.Writer) {
		t := zfsTableWriter{w, snapshotColumns}
		t.header(version)
		var b []byte
		for _, d := range all {
			if len(d.snaps) == 0 {
				continue
			}
			w.WriteString(d.name + "\n")
			for _, sn := range d.snaps {
				b = append(b[:0], sn.name...)
				for _, v := range []int64{sn.txg, sn.created, sn.used, sn.refer} {
					b = strconv.AppendInt(append(b, '\t'), v, 10)
				}
				b = append(append(b, '\t'), ratioOf(sn.logicalRefer, sn.refer)...)
				for _, v := range []int64{sn.written, sn.logicalRefer, sn.objsetid} {
					b = strconv.AppendInt(append(b, '\t'), v, 10)
				}
				b = append(b, "\t\n"...)
				w.Write(b)
			}
		}
	})
}

// appendDataset appends a dataset's row of datasets.tsv.
func appendDataset(b []byte, d *genDataset) []byte {
	num := func(v int64) { b = strconv.AppendInt(append(b, '\t'), v, 10) }
	str := func(v string) { b = append(append(b, '\t'), v...) }
	var sources []string
	source := func(prop, src string) {
		if src != "" {
			sources = append(sources, prop+"="+src)
		}
	}
	b = append(b, d.name...)
	typ := "filesystem"
	if d.volume {
		typ = "volume"
	}
	str(typ)
	num(d.txg)
	num(d.created)
	num(d.used)
	num(d.avail)
	num(d.refer)
	str(ratioOf(d.logicalUs, d.used))
	str(ratioOf(d.logicalRefer, d.refer))
	for _, v := range []int64{d.usedSnap, d.refer, d.usedChild, d.usedRefres, d.written, d.logicalUs, d.logicalRefer} {
		num(v)
	}
	settable := func(prop string, v int64, onlyFS bool) {
		switch {
		case onlyFS && d.volume:
			str("-")
		default:
			num(v)
			if v != 0 {
				source(prop, "local")
			}
		}
	}
	settable("quota", d.quota, true)
	settable("refquota", d.refquota, true)
	settable("reservation", d.reservation, false)
	settable("refreservation", d.refreservation, false)
	if d.volume {
		num(d.volsize)
		source("volsize", "local")
		str("-")
	} else {
		str("-")
		str(d.mountpoint)
		source("mountpoint", d.mountpointSource)
	}
	str(d.compression)
	if d.compressionSource != "default" {
		source("compression", d.compressionSource)
	}
	num(d.objsetid)
	str(d.encryption)
	str(d.keylocation)
	str(d.keyformat)
	num(d.pbkdf2iters)
	if d.encryptionRoot == d.name {
		source("encryption", "-")
		source("keylocation", "local")
		source("keyformat", "-")
		if d.pbkdf2iters != 0 {
			source("pbkdf2iters", "-")
		}
	}
	str(d.encryptionRoot)
	if d.encryption == "off" {
		str("-")
	} else {
		str("available")
	}
	if d.snapshotLimit >= 0 {
		num(d.snapshotLimit)
		num(int64(len(d.snaps)))
		source("snapshot_limit", "local")
		source("snapshot_count", "local")
	} else {
		str("none")
		str("none")
	}
	if n := len(d.snaps); n > 0 {
		num(d.snaps[n-1].created)
	} else {
		str("-")
	}
	str(strings.Join(sources, ","))
	return append(b, '\n')
}
