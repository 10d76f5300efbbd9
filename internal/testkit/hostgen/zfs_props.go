package hostgen

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// zfsType is a kind of dataset, as a bit of a set of kinds.
type zfsType uint8

const (
	typeFilesystem zfsType = 1 << iota
	typeVolume
	typeSnapshot
)

// typeNames are the kinds as `zfs list -t` and the type property name
// them, and as JSON does.
var typeNames = map[zfsType][2]string{
	typeFilesystem: {"filesystem", "FILESYSTEM"},
	typeVolume:     {"volume", "VOLUME"},
	typeSnapshot:   {"snapshot", "SNAPSHOT"},
}

// propKind is how zfs prints a property's value: exactly with -p, and
// without -p as zfs_prop_get of libzfs does.
type propKind uint8

const (
	kindString  propKind = iota // as stored, left-aligned
	kindIndex                   // one of a set of words, left-aligned
	kindBytes                   // used, available...: 1.5M, 0B
	kindNumber                  // written, logicalused, recordsize...: 1.5M, 0
	kindQuota                   // quota, reservation...: 0 is none
	kindLimit                   // filesystem_limit, snapshot_count...: none
	kindRatio                   // compressratio: 1.00, or 1.00x without -p
	kindRaw                     // guid, createtxg, objsetid: always exact
	kindDate                    // creation: seconds, or "Mon Nov 30 12:00 2026"
	kindDateSec                 // snapshots_changed: the date with seconds
)

// zfsProp is a dataset property as zfs knows it (module/zcommon/zfs_prop.c
// of OpenZFS 2.3.2 and 2.4.4, which agree on those both have).
type zfsProp struct {
	name   string
	column string   // zfs list's header, which zfs also takes as the property's name in lower case
	kind   propKind //
	types  zfsType  // the kinds of dataset it applies to
	width  int      // of an index: its longest word, the least width of its column
	// value is the host's value where the host's files hold none for a
	// dataset, as exactly as -p prints it; "-" where zfs has none (it
	// prints "-", and leaves the property out of "all").
	value string
	// source is where value comes from, as zfs get prints it: "-" (none:
	// a read-only property, or one the kernel reports without a source)
	// or "default".
	source  string
	visible bool   // listed by "all"; a hidden property is taken by name only
	since   string // the release that added it, when later than 2.3
	order   int    // in the table, which is zfs's order of "all"
}

// zfsPropTable lists every property of a filesystem, volume or snapshot
// in the order of zfs_prop_t, which is the order of `zfs get all`, with
// the value a dataset of a generated host has unless its row says
// otherwise. Columns: name, header, kind (an index with the length of its
// longest word), types (f, v, s), value, source, and "hidden" or the
// release that added the property.
const zfsPropTable = `
type	TYPE	string	fvs	-	-
creation	CREATION	date	fvs	-	-
used	USED	bytes	fvs	-	-
available	AVAIL	bytes	fv	-	-
referenced	REFER	bytes	fvs	-	-
compressratio	RATIO	ratio	fvs	-	-
mounted	MOUNTED	index:3	f	yes	-
origin	ORIGIN	string	fv	-	-
quota	QUOTA	quota	f	0	default
reservation	RESERV	quota	fv	0	default
volsize	VOLSIZE	number	vs	-	default
volblocksize	VOLBLOCK	number	v	16384	default
recordsize	RECSIZE	number	f	131072	default
mountpoint	MOUNTPOINT	string	f	-	default
sharenfs	SHARENFS	string	f	off	default
checksum	CHECKSUM	index:9	fv	on	default
compression	COMPRESS	index:14	fv	on	default
atime	ATIME	index:3	f	on	default
devices	DEVICES	index:3	fs	on	default
exec	EXEC	index:3	fs	on	default
setuid	SETUID	index:3	fs	on	default
readonly	RDONLY	index:3	fv	off	default
zoned	ZONED	index:3	f	off	default
snapdir	SNAPDIR	index:8	f	hidden	default
aclmode	ACLMODE	index:11	f	discard	default
aclinherit	ACLINHERIT	index:13	f	restricted	default
createtxg	CREATETXG	raw	fvs	-	-
name	NAME	string	fvs	-	-	hidden
canmount	CANMOUNT	index:6	f	on	default
iscsioptions	ISCSIOPTIONS	string	v	-	-	hidden
xattr	XATTR	index:3	fs	sa	default
numclones	NUMCLONES	number	s	-	-	hidden
copies	COPIES	index:1	fv	1	default
version	VERSION	index:7	fs	5	-
utf8only	UTF8ONLY	index:3	fs	off	-
normalization	NORMALIZATION	index:6	fs	none	-
casesensitivity	CASE	index:11	fs	sensitive	-
vscan	VSCAN	index:3	f	off	default
nbmand	NBMAND	index:3	fs	off	default
sharesmb	SHARESMB	string	f	off	default
refquota	REFQUOTA	quota	f	0	default
refreservation	REFRESERV	quota	fv	0	default
guid	GUID	raw	fvs	-	-
primarycache	PRIMARYCACHE	index:8	fvs	all	default
secondarycache	SECONDARYCACHE	index:8	fvs	all	default
usedbysnapshots	USEDSNAP	bytes	fv	-	-
usedbydataset	USEDDS	bytes	fv	-	-
usedbychildren	USEDCHILD	bytes	fv	-	-
usedbyrefreservation	USEDREFRESERV	bytes	fv	-	-
useraccounting	USERACCOUNTING	number	fvs	-	-	hidden
stmf_sbd_lu	STMF_SBD_LU	string	v	-	-	hidden
defer_destroy	DEFER_DESTROY	index:3	s	off	-
userrefs	USERREFS	number	s	0	-
logbias	LOGBIAS	index:10	fv	latency	default
unique	UNIQUE	number	fvs	-	-	hidden
objsetid	OBJSETID	raw	fvs	-	-
dedup	DEDUP	index:13	fv	off	default
mlslabel	MLSLABEL	string	fvs	none	default
sync	SYNC	index:8	fv	standard	default
dnodesize	DNSIZE	index:6	f	legacy	default
refcompressratio	REFRATIO	ratio	fvs	-	-
written	WRITTEN	number	fvs	-	-
clones	CLONES	string	s	-	-
logicalused	LUSED	number	fv	-	-
logicalreferenced	LREFER	number	fvs	-	-
inconsistent	INCONSISTENT	number	fvs	-	-	hidden
volmode	VOLMODE	index:7	fv	default	default
filesystem_limit	FSLIMIT	limit	f	none	default
snapshot_limit	SSLIMIT	limit	fv	none	default
filesystem_count	FSCOUNT	limit	f	none	default
snapshot_count	SSCOUNT	limit	fv	none	default
snapdev	SNAPDEV	index:7	fv	hidden	default
acltype	ACLTYPE	index:8	fs	off	default
context	CONTEXT	string	fvs	none	default
fscontext	FSCONTEXT	string	fvs	none	default
defcontext	DEFCONTEXT	string	fvs	none	default
rootcontext	ROOTCONTEXT	string	fvs	none	default
relatime	RELATIME	index:3	f	on	default
redundant_metadata	REDUND_MD	index:4	fv	all	default
overlay	OVERLAY	index:3	f	on	default
prevsnap	PREVSNAP	string	fv	-	-	hidden
receive_resume_token	RESUMETOK	string	fv	-	-
encryption	ENCRYPTION	index:11	fvs	off	default
keylocation	KEYLOCATION	string	fv	none	default
keyformat	KEYFORMAT	index:10	fv	none	default
pbkdf2salt	PBKDF2SALT	number	fv	-	-	hidden
pbkdf2iters	PBKDF2ITERS	raw	fv	0	default
encryptionroot	ENCROOT	string	fvs	-	-
keyguid	KEYGUID	number	fvs	-	-	hidden
keystatus	KEYSTATUS	index:11	fvs	-	-
remaptxg	REMAPTXG	number	fvs	-	-	hidden
special_small_blocks	SPECIAL_SMALL_BLOCKS	number	fv	0	default
ivsetguid	IVSETGUID	number	fvs	-	-	hidden
redacted	REDACTED	number	fvs	-	-	hidden
redact_snaps	RSNAPS	string	fvs	-	-
snapshots_changed	SNAPSHOTS_CHANGED	datesec	fv	-	-
prefetch	PREFETCH	index:8	fvs	all	default
volthreading	zvol threading	index:3	v	on	default
direct	DIRECT	index:8	f	standard	default
longname	LONGNAME	index:3	f	off	default
defaultuserquota	DEFAULTUSERQUOTA	number	fs	0	-	2.4
defaultgroupquota	DEFAULTGROUPQUOTA	number	fs	0	-	2.4
defaultprojectquota	DEFAULTPROJECTQUOTA	number	fs	0	-	2.4
defaultuserobjquota	DEFAULTUSEROBJQUOTA	number	fs	0	-	2.4
defaultgroupobjquota	DEFAULTGROUPOBJQUOTA	number	fs	0	-	2.4
defaultprojectobjquota	DEFAULTPROJECTOBJQUOTA	number	fs	0	-	2.4
`

// zfsProps are the properties of zfsPropTable, in its order.
var zfsProps = parsePropTable(zfsPropTable)

func parsePropTable(table string) []*zfsProp {
	kinds := map[string]propKind{"string": kindString, "index": kindIndex, "bytes": kindBytes, "number": kindNumber,
		"quota": kindQuota, "limit": kindLimit, "ratio": kindRatio, "raw": kindRaw, "date": kindDate, "datesec": kindDateSec}
	var props []*zfsProp
	for _, r := range parseRows(table) {
		p := &zfsProp{name: r[0], column: r[1], value: r[4], source: r[5], visible: true, order: len(props)}
		kind, width, _ := strings.Cut(r[2], ":")
		p.kind = kinds[kind]
		p.width, _ = strconv.Atoi(width)
		for _, c := range r[3] {
			p.types |= map[rune]zfsType{'f': typeFilesystem, 'v': typeVolume, 's': typeSnapshot}[c]
		}
		if len(r) > 6 {
			if r[6] == "hidden" {
				p.visible = false
			} else {
				p.since = r[6]
			}
		}
		props = append(props, p)
	}
	return props
}

// lookupProp finds a property by its name or its header in lower case,
// as zprop_name_to_prop does, among those of the release.
func lookupProp(name, version string) *zfsProp {
	for _, p := range zfsProps {
		if p.in(version) && (p.name == name || strings.ToLower(p.column) == name && !strings.Contains(p.column, " ")) {
			return p
		}
	}
	return nil
}

// in tells whether release version has the property.
func (p *zfsProp) in(version string) bool { return p.since == "" || p.since <= version }

// numeric tells whether zfs reads the property as a number (or an index
// into a set of words) and sorts it as one: get_numeric_property.
func (p *zfsProp) numeric() bool { return p.kind != kindString && p.kind != kindIndex }

// rightAligned tells whether zfs list aligns the column to the right:
// numbers, but for the dates.
func (p *zfsProp) rightAligned() bool {
	return p.numeric() && p.kind != kindDate && p.kind != kindDateSec
}

// minWidth is the width zfs gives the column before it has seen a value
// (zprop_width), and fixed whether the values widen it: numbers of a fixed
// width are never wider than 5 characters without -p.
func (p *zfsProp) minWidth() (width int, fixed bool) {
	width = len(p.column)
	switch {
	case p.kind == kindIndex:
		width = max(width, p.width)
	case p.numeric():
		width = max(width, 5)
	}
	flex := p.kind == kindString || p.kind == kindIndex || p.kind == kindRaw || p.kind == kindDate || p.kind == kindDateSec
	return width, !flex
}

// format prints a value as zfs does: exactly when literal (-p), else
// human-readable. A value that is not a number is printed as it is.
func (p *zfsProp) format(v string, literal bool) string {
	if literal && p.kind != kindLimit {
		return v
	}
	n, err := strconv.ParseUint(v, 10, 64)
	switch p.kind {
	case kindRatio:
		return v + "x"
	case kindQuota:
		if v == "0" {
			return "none"
		}
		if err == nil {
			return nicenum(n, true)
		}
	case kindBytes:
		if err == nil {
			return nicenum(n, true)
		}
	case kindNumber:
		if err == nil {
			return nicenum(n, false)
		}
	case kindLimit:
		if err == nil && !literal {
			return nicenum(n, false)
		}
	case kindDate, kindDateSec:
		if err == nil {
			t := time.Unix(int64(n), 0).Local()
			hm := fmt.Sprintf("%2d:%02d", t.Hour(), t.Minute())
			if p.kind == kindDateSec {
				hm += fmt.Sprintf(":%02d", t.Second())
			}
			return fmt.Sprintf("%s %s %2d %s %d", t.Weekday().String()[:3], t.Month().String()[:3], t.Day(), hm, t.Year())
		}
	}
	return v
}

// nicenum is zfs_nicenum_format of libzutil: a number of bytes ("1.5M",
// "0B") or of things ("1.5M", "0"), in at most 5 characters where it can.
func nicenum(n uint64, bytes bool) string {
	units := []string{"", "K", "M", "G", "T", "P", "E"}
	if bytes {
		units[0] = "B"
	}
	index := 0
	for m := n; m >= 1024 && index < 6; m /= 1024 {
		index++
	}
	div := uint64(1) << (10 * index)
	if index == 0 || n%div == 0 {
		return strconv.FormatUint(n/div, 10) + units[index]
	}
	val := float64(n) / float64(div)
	var s string
	for prec := 2; prec >= 0; prec-- {
		if s = strconv.FormatFloat(val, 'f', prec, 64) + units[index]; len(s) <= 5 {
			break
		}
	}
	return s
}

// ratioOf prints a ratio of two sizes as zfs does, with two decimals cut
// (not rounded) from the percentage, and never under 1.00.
func ratioOf(logical, physical int64) string {
	pct := int64(100)
	if physical > 0 {
		pct = max(100, int64(math.Floor(float64(logical)*100/float64(physical))))
	}
	return fmt.Sprintf("%d.%02d", pct/100, pct%100)
}
