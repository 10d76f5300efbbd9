// Package kstat parses the kernel statistics ZFS exports on each platform:
//
//   - Linux: the files under /proc/spl/kstat/zfs. Named kstats (arcstats,
//     <pool>/iostats, <pool>/objset-0x*, ...) with ParseNamed; <pool>/state
//     with ParsePoolState, <pool>/guid with ParsePoolGUID, <pool>/txgs with
//     ParseTxgs, the old <pool>/io (gone since OpenZFS 2.1) with ParseIO, and
//     the other tables (<pool>/reads, <pool>/multihost, import_progress,
//     dbgmsg, the *_bench tables) with ParseTable.
//   - illumos and Solaris: `kstat -p` with ParseKstatP, and the
//     human-readable `kstat` form with ParseKstat. Both return the same
//     []Stat; Group collects them into kstats.
//   - FreeBSD: `sysctl kstat.zfs...` with ParseSysctl.
//
// ARC, Misc (the other module-wide kstats: zil, dmu_tx, abdstats,
// zfetchstats), Dataset, PoolIOStats and IO are the shapes the collector
// exports, the same on every platform: ARCFromNamed, ARCFromKstatP and
// ARCFromSysctl build one ARC from each source, and so on.
//
// The parsers are pure: they read an io.Reader and return typed values, with
// no exec, no files and no metrics. Output they cannot read gives a parse
// error (package parse) naming its line; a failed read, or a line past
// their bound, is returned as it is. Durations read from the kernel are
// time.Duration (Linux and FreeBSD print nanoseconds; illumos prints seconds
// with nine decimals, which convert exactly).
package kstat
