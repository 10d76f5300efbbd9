package hostgen

import (
	"bufio"
	"strconv"
)

// poolRows are r10's rows of `zpool get -Hp all` on OpenZFS 2.3.2 (the
// guest's 01-created scenario), which every generated pool prints with
// its own name, GUIDs and space.
var poolRows = parseRows(`
size	{size}	-
capacity	{capacity}	-
altroot	-	default
health	ONLINE	-
guid	{guid}	-
version	-	default
bootfs	-	default
delegation	on	default
autoreplace	off	default
cachefile	-	default
failmode	wait	default
listsnapshots	off	default
autoexpand	off	default
dedupratio	1.00	-
free	{free}	-
allocated	{allocated}	-
readonly	off	-
ashift	0	default
comment	-	default
expandsize	-	-
freeing	0	-
fragmentation	1	-
leaked	0	-
multihost	off	default
checkpoint	-	-
load_guid	{load_guid}	-
autotrim	off	default
compatibility	off	default
bcloneused	0	-
bclonesaved	0	-
bcloneratio	1.00	-
dedup_table_size	0	-
dedup_table_quota	auto	default
last_scrubbed_txg	0	-
feature@async_destroy	enabled	local
feature@empty_bpobj	enabled	local
feature@lz4_compress	active	local
feature@multi_vdev_crash_dump	enabled	local
feature@spacemap_histogram	active	local
feature@enabled_txg	active	local
feature@hole_birth	active	local
feature@extensible_dataset	active	local
feature@embedded_data	active	local
feature@bookmarks	enabled	local
feature@filesystem_limits	enabled	local
feature@large_blocks	enabled	local
feature@large_dnode	enabled	local
feature@sha512	enabled	local
feature@skein	enabled	local
feature@edonr	enabled	local
feature@userobj_accounting	active	local
feature@encryption	enabled	local
feature@project_quota	active	local
feature@device_removal	enabled	local
feature@obsolete_counts	enabled	local
feature@zpool_checkpoint	enabled	local
feature@spacemap_v2	active	local
feature@allocation_classes	enabled	local
feature@resilver_defer	enabled	local
feature@bookmark_v2	enabled	local
feature@redaction_bookmarks	enabled	local
feature@redacted_datasets	enabled	local
feature@bookmark_written	enabled	local
feature@log_spacemap	active	local
feature@livelist	enabled	local
feature@device_rebuild	enabled	local
feature@zstd_compress	enabled	local
feature@draid	enabled	local
feature@zilsaxattr	active	local
feature@head_errlog	active	local
feature@blake3	enabled	local
feature@block_cloning	enabled	local
feature@vdev_zaps_v2	active	local
feature@redaction_list_spill	enabled	local
feature@raidz_expansion	enabled	local
feature@fast_dedup	enabled	local
feature@longname	enabled	local
feature@large_microzap	enabled	local
`)

// poolRows24 are the features OpenZFS 2.4.4 lists after 2.3.2's.
var poolRows24 = parseRows(`
feature@dynamic_gang_header	enabled	local
feature@block_cloning_endian	enabled	local
feature@physical_rewrite	enabled	local
`)

// writePoolProperties writes `zpool get -Hp all`: every pool's rows, the
// pools in the order zpool lists them (by name).
func writePoolProperties(w *bufio.Writer, h host) {
	rows := poolRows
	if h.spec.Version == "2.4" {
		rows = rows.with(poolRows24)
	}
	for _, p := range h.pools {
		size, allocated := poolSpace(p)
		rows.write(w, p.name, map[string]string{
			"size":      strconv.FormatInt(size, 10),
			"capacity":  strconv.FormatInt(allocated*100/size, 10),
			"guid":      strconv.FormatUint(p.guid, 10),
			"free":      strconv.FormatInt(size-allocated, 10),
			"allocated": strconv.FormatInt(allocated, 10),
			"load_guid": strconv.FormatUint(p.loadGUID, 10),
		})
	}
}
