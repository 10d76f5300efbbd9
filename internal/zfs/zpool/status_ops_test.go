package zpool

import (
	"bytes"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/zpool-exporter/zpool_exporter/internal/testkit/sample"
)

func fp(v float64) *float64 { return &v }
func ip(v int) *int         { return &v }

// utc reads a time as the tests pass time.UTC for the local zone.
func utc(t *testing.T, s string) time.Time {
	t.Helper()
	v, err := time.Parse(time.DateTime, s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// poolOps are the values of a pool that the remove:, expand: and
// checkpoint: lines give.
type poolOps struct {
	Removal    *Removal
	Expansion  *Expansion
	Checkpoint *Checkpoint
}

func opsOf(p *Pool) poolOps { return poolOps{p.Removal, p.Expansion, p.Checkpoint} }

// TestParseStatusPublic reads the public outputs of testdata/public, each
// headed by where it was found, against the values read from it by eye,
// and against its golden file.
func TestParseStatusPublic(t *testing.T) {
	paths, err := filepath.Glob("testdata/public/*.txt")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no public status outputs: %v", err)
	}
	want := map[string]poolOps{
		"remove-evacuation-in-progress-freebsd.txt": {Removal: &Removal{
			State: ScanScanning, Vdev: "/dev/da0p4",
			Start:  utc(t, "2025-01-27 16:10:59"),
			Copied: fp(158 * statusMiB), Total: fp(698 * statusMiB), Rate: fp(39.4 * statusMiB),
			Progress: fp(0.2257), Remaining: fp(0),
		}},
		"remove-finished-resilvering-freebsd.txt": {Removal: &Removal{
			State: ScanFinished, VdevIndex: ip(0),
			End:    utc(t, "2025-01-27 16:11:11"),
			Copied: fp(698 * statusMiB), Duration: fp(0), MappingMemory: fp(10.1 * statusKiB),
		}},
		"remove-finished-o3x-blank-lines-stripped.txt": {Removal: &Removal{
			State: ScanFinished, VdevIndex: ip(0),
			End:    utc(t, "2023-04-26 00:08:13"),
			Copied: fp(744 * statusMiB), Duration: fp(0), MappingMemory: fp(18.2 * statusKiB),
		}},
	}
	for _, path := range paths {
		name := filepath.Base(path)
		t.Run(name, func(t *testing.T) {
			f := sample.MustRead(t, path)
			if f.Header["source"] == "" || f.Header["command"] == "" {
				t.Errorf("header without source or command: %v", f.Header)
			}
			st := parseStatusSample(t, path)
			checkStatusGolden(t, path, st)
			w, ok := want[name]
			if !ok {
				t.Fatal("public output without expected values: add them to want")
			}
			if len(st.Pools) != 1 {
				t.Fatalf("%d pools", len(st.Pools))
			}
			p := st.Pools[0]
			if diff := cmp.Diff(w, opsOf(p)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if len(p.Warnings) != 0 || p.Root == nil || len(p.Scans) != 1 {
				t.Errorf("warnings %q, root %v, %d scans", p.Warnings, p.Root != nil, len(p.Scans))
			}
		})
	}
	// The notes around a removal stay notes.
	st := parseStatusSample(t, "testdata/public/remove-evacuation-in-progress-freebsd.txt")
	if v := statusVdevAt(t, st.Pools[0], "da0p4"); v.Note != "(removing)" || v.Trim != nil {
		t.Errorf("da0p4: note %q, trim %+v", v.Note, v.Trim)
	}
	st = parseStatusSample(t, "testdata/public/remove-finished-resilvering-freebsd.txt")
	if s := st.Pools[0].Scans[0]; s.Function != ScanResilver || s.State != ScanScanning {
		t.Errorf("the scan before remove: is %s %s", s.Function, s.State)
	}
}

// TestParseStatusOpsCorpus reads expansion and TRIM annotations from the
// shared corpus and captures.
func TestParseStatusOpsCorpus(t *testing.T) {
	dir := sample.Dir(t, "corpus/zpool-status")
	read := func(t *testing.T, name string) *Status {
		t.Helper()
		f := sample.MustRead(t, filepath.Join(dir, name))
		st, err := ParseStatus(bytes.NewReader(f.Body), time.UTC)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range st.Pools {
			if len(p.Warnings) != 0 {
				t.Errorf("pool %s: warnings %q", p.Name, p.Warnings)
			}
		}
		return st
	}
	t.Run("expand in progress", func(t *testing.T) {
		st := read(t, "openzfs23-raidz-expand-in-progress-zts-log-prefixed.txt")
		want := poolOps{Expansion: &Expansion{
			State: ScanScanning, Vdev: "raidz2-0",
			Start:  utc(t, "2024-08-07 12:18:13"),
			Copied: fp(62.9 * statusMiB), Total: fp(129 * statusMiB), Rate: fp(550 * statusKiB),
			Progress: fp(0.4880), Remaining: fp(122),
		}}
		if diff := cmp.Diff(want, opsOf(st.Pools[0])); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
	})
	type leafOps struct {
		Note             string
		Trim, Initialize *VdevOp
	}
	leaf := func(v *Vdev) leafOps { return leafOps{v.Note, v.Trim, v.Initialize} }
	unsupported := &VdevOp{State: VdevOpUnsupported}
	t.Run("trim started, 0.8 locale date", func(t *testing.T) {
		st := read(t, "zol08dev-t-trim-two-pools-locale-date.txt")
		got := []leafOps{
			leaf(statusVdevAt(t, st.Pools[0], "sdd")),
			leaf(statusVdevAt(t, st.Pools[1], "scsi-36000c290f7e3d3e0c3644005631d8107")),
		}
		want := []leafOps{
			{"(0% trimmed, started at Thu 21 Feb 2019 07:32:44 PM UTC)",
				&VdevOp{State: VdevOpActive, Progress: fp(0), Start: utc(t, "2019-02-21 19:32:44")}, nil},
			{"(trim unsupported)", unsupported, nil},
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
	})
	t.Run("trim completed, logs", func(t *testing.T) {
		st := read(t, "zol08dev-t-trimmed-completed-logs-tab-trailing.txt")
		p := st.Pools[0]
		// The zone (PST) is dropped: zpool printed local time, read in
		// the location the caller gives.
		done := &VdevOp{State: VdevOpComplete, Progress: fp(1), End: utc(t, "2019-02-20 18:12:21")}
		got := []leafOps{leaf(statusVdevAt(t, p, "/var/tmp/vdev1")), leaf(statusVdevAt(t, p, "vdd")), leaf(statusVdevAt(t, p, "/var/tmp/log"))}
		want := []leafOps{
			{"(100% trimmed, completed at Wed 20 Feb 2019 06:12:21 PM PST)", done, nil},
			{"(trim unsupported)", unsupported, nil},
			{"(100% trimmed, completed at Wed 20 Feb 2019 06:12:21 PM PST)", done, nil},
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
	})
	t.Run("trim unsupported, mirror", func(t *testing.T) {
		st := read(t, "openzfs226-t-trim-unsupported-mirror-complete.txt")
		p := st.Pools[0]
		got := []leafOps{leaf(statusVdevAt(t, p, "mirror-0", "sda3")), leaf(statusVdevAt(t, p, "mirror-0", "sdb3")), leaf(statusVdevAt(t, p, "mirror-0"))}
		want := []leafOps{{"(trim unsupported)", unsupported, nil}, {"(trim unsupported)", unsupported, nil}, {}}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
	})
	t.Run("resilvering is no TRIM", func(t *testing.T) {
		st := read(t, "draid-sequential-resilver-spare-inuse.txt")
		walkStatusVdevs(st.Pools[0].Root, func(v *Vdev) {
			if v.Trim != nil || v.Initialize != nil {
				t.Errorf("%s (%q): trim %+v, initialize %+v", v.Name, v.Note, v.Trim, v.Initialize)
			}
		})
	})
}

// The untrimmed leaves of a real OpenZFS 2.3.2 (`zpool status -s -t -p`).
func TestParseStatusOpsCaptures(t *testing.T) {
	dir := sample.Dir(t, "captures/openzfs-2.3")
	f := sample.MustRead(t, filepath.Join(dir, "09-errors-repaired__zpool-status-s-t-p.txt"))
	st, err := ParseStatus(bytes.NewReader(f.Body), time.UTC)
	if err != nil {
		t.Fatal(err)
	}
	untrimmed := &VdevOp{State: VdevOpNone}
	leaves, trimmed := 0, 0
	for _, p := range st.Pools {
		walkStatusVdevs(p.Root, func(v *Vdev) {
			if len(v.Children) > 0 || v.Type == "root" {
				if v.Trim != nil {
					t.Errorf("%s %s: interior vdev with trim %+v", p.Name, v.Name, v.Trim)
				}
				return
			}
			leaves++
			if diff := cmp.Diff(untrimmed, v.Trim); diff == "" {
				trimmed++
			} else {
				t.Errorf("%s %s (%q): (-want +got):\n%s", p.Name, v.Name, v.Note, diff)
			}
		})
	}
	if leaves == 0 || trimmed != leaves {
		t.Errorf("%d of %d leaves untrimmed", trimmed, leaves)
	}
}

// TestParseStatusOpsForms covers the other wordings: lines quoted from
// public reports, and forms written from the format strings of
// zpool_main.c where no public output was found (dated 2026, like the
// other fixtures built that way).
func TestParseStatusOpsForms(t *testing.T) {
	for _, tc := range []struct {
		name  string
		lines []string
		want  poolOps
	}{
		{"openzfs/zfs#16803: expansion past 100%, copy is slow", []string{
			"expand: expansion of raidz2-0 in progress since Wed Nov 13 14:35:36 2024",
			"        12.8T / 12.8T copied at 16.6M/s, 100.25% done, (copy is slow, no estimated time)",
		}, poolOps{Expansion: &Expansion{
			State: ScanScanning, Vdev: "raidz2-0", Start: utc(t, "2024-11-13 14:35:36"),
			Copied: fp(12.8 * statusTiB), Total: fp(12.8 * statusTiB), Rate: fp(16.6 * statusMiB), Progress: fp(1.0025),
		}}},
		{"openzfs/zfs#18103: copied more than the total", []string{
			"  scan: scrub canceled on Sun Dec 21 22:20:02 2025",
			"expand: expansion of raidz2-0 in progress since Fri Dec 19 00:39:32 2025",
			"        89.2T / 88.4T copied at 84.6M/s, 100.93% done, (copy is slow, no estimated time)",
		}, poolOps{Expansion: &Expansion{
			State: ScanScanning, Vdev: "raidz2-0", Start: utc(t, "2025-12-19 00:39:32"),
			Copied: fp(89.2 * statusTiB), Total: fp(88.4 * statusTiB), Rate: fp(84.6 * statusMiB), Progress: fp(1.0093),
		}}},
		{"rouben/zfswatcher#16: checkpoint", []string{
			"checkpoint: created Tue Jun  8 08:08:45 2021, consumes 468K",
		}, poolOps{Checkpoint: &Checkpoint{State: CheckpointExists, Created: utc(t, "2021-06-08 08:08:45"), Space: fp(468 * statusKiB)}}},
		{"checkpoint discarding", []string{
			"checkpoint: discarding, 1.21M remaining.",
		}, poolOps{Checkpoint: &Checkpoint{State: CheckpointDiscarding, Space: fp(1.21 * statusMiB)}}},
		{"removal canceled", []string{
			"remove: Removal of /dev/sdb canceled on Mon Nov 30 07:04:12 2026",
			"\t3.41M memory used for removed device mappings",
		}, poolOps{Removal: &Removal{State: ScanCanceled, Vdev: "/dev/sdb", End: utc(t, "2026-11-30 07:04:12"), MappingMemory: fp(3.41 * statusMiB)}}},
		{"removal copy is slow", []string{
			"remove: Evacuation of mirror in progress since Mon Nov 30 07:04:12 2026",
			"\t1.00G copied out of 9.00T at 1/s, 0.01% done, (copy is slow, no estimated time)",
			"\t96 memory used for removed device mappings",
		}, poolOps{Removal: &Removal{
			State: ScanScanning, Vdev: "mirror", Start: utc(t, "2026-11-30 07:04:12"),
			Copied: fp(statusGiB), Total: fp(9 * statusTiB), Rate: fp(1), Progress: fp(0.0001), MappingMemory: fp(96),
		}}},
		{"expansion finished", []string{
			"expand: expanded raidz1-0 copied 1.50G in 1 days 00:01:02, on Mon Nov 30 07:04:12 2026",
		}, poolOps{Expansion: &Expansion{
			State: ScanFinished, Vdev: "raidz1-0", End: utc(t, "2026-11-30 07:04:12"), Copied: fp(1.5 * statusGiB), Duration: fp(86400 + 62),
		}}},
		{"expansion waiting for a resilver", []string{
			"expand: expansion of raidz1-0 in progress since Mon Nov 30 07:04:12 2026",
			"\t1.02G / 3.00G copied at 12.0M/s, 34.00% done, paused for resilver or clear",
		}, poolOps{Expansion: &Expansion{
			State: ScanScanning, Vdev: "raidz1-0", Start: utc(t, "2026-11-30 07:04:12"),
			Copied: fp(1.02 * statusGiB), Total: fp(3 * statusGiB), Rate: fp(12 * statusMiB), Progress: fp(0.34), WaitingForResilver: true,
		}}},
		{"all three", []string{
			"remove: Removal of vdev 1 copied 2.10G in 0h1m, completed on Mon Nov 30 07:04:12 2026",
			"\t3.41M memory used for removed device mappings",
			"checkpoint: created Mon Nov 30 07:05:00 2026, consumes 1.21M",
			"expand: expanded raidz1-0 copied 1.50G in 00:01:02, on Mon Nov 30 07:06:00 2026",
		}, poolOps{
			Removal: &Removal{State: ScanFinished, VdevIndex: ip(1), End: utc(t, "2026-11-30 07:04:12"),
				Copied: fp(2.1 * statusGiB), Duration: fp(60), MappingMemory: fp(3.41 * statusMiB)},
			Checkpoint: &Checkpoint{State: CheckpointExists, Created: utc(t, "2026-11-30 07:05:00"), Space: fp(1.21 * statusMiB)},
			Expansion: &Expansion{State: ScanFinished, Vdev: "raidz1-0", End: utc(t, "2026-11-30 07:06:00"),
				Copied: fp(1.5 * statusGiB), Duration: fp(62)},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, err := ParseStatus(strings.NewReader(statusText(append(tc.lines, statusMiniConfig)...)), time.UTC)
			if err != nil {
				t.Fatal(err)
			}
			p := st.Pools[0]
			if diff := cmp.Diff(tc.want, opsOf(p)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if len(p.Warnings) != 0 || p.Root == nil {
				t.Errorf("warnings %q, root %v", p.Warnings, p.Root)
			}
		})
	}
}

// Initialization annotations (`zpool status -i`), alone and with TRIM's,
// written from print_status_initialize and print_status_trim.
func TestParseStatusVdevOpForms(t *testing.T) {
	at := utc(t, "2026-11-30 07:04:12")
	for _, tc := range []struct {
		note             string
		trim, initialize *VdevOp
	}{
		{"(12% initialized, started at Mon Nov 30 07:04:12 2026)  (untrimmed)",
			&VdevOp{State: VdevOpNone}, &VdevOp{State: VdevOpActive, Progress: fp(0.12), Start: at}},
		{"(100% initialized, completed at Mon Nov 30 07:04:12 2026)  (45% trimmed, suspended, started at Mon Nov 30 07:04:12 2026)",
			&VdevOp{State: VdevOpSuspended, Progress: fp(0.45), Start: at}, &VdevOp{State: VdevOpComplete, Progress: fp(1), End: at}},
		{"(uninitialized)", nil, &VdevOp{State: VdevOpNone}},
		{"(initializing)  (trimming)", &VdevOp{State: VdevOpActive}, &VdevOp{State: VdevOpActive}},
		{"too many errors  (untrimmed)", &VdevOp{State: VdevOpNone}, nil},
		{"(awaiting resilver)", nil, nil},
		{"SEAGATE (3.7T)", nil, nil},
	} {
		in := statusText(statusMiniConfig + "\t  sdb       ONLINE       0     0     0  " + tc.note)
		st, err := ParseStatus(strings.NewReader(in), time.UTC)
		if err != nil {
			t.Fatal(err)
		}
		v := statusVdevAt(t, st.Pools[0], "sdb")
		if v.Note != tc.note || len(st.Pools[0].Warnings) != 0 {
			t.Errorf("%q: note %q, warnings %q", tc.note, v.Note, st.Pools[0].Warnings)
		}
		if diff := cmp.Diff([]*VdevOp{tc.trim, tc.initialize}, []*VdevOp{v.Trim, v.Initialize}); diff != "" {
			t.Errorf("%q: (-want +got):\n%s", tc.note, diff)
		}
	}
}

// A line of these sections that cannot be read becomes a warning naming
// it; the rest of the pool is read.
func TestParseStatusOpsWarnings(t *testing.T) {
	for _, tc := range []struct {
		name  string
		lines []string
		want  string
		ops   poolOps
	}{
		{"bad removal duration", []string{
			"remove: Removal of vdev 1 copied 2.10G in soon, completed on Mon Nov 30 07:04:12 2026",
			"\t3.41M memory used for removed device mappings",
		}, `line 3: cannot parse remove: line "Removal of vdev 1 copied 2.10G in soon, completed on Mon Nov 30 07:04:12 2026": invalid duration "soon"`, poolOps{}},
		{"unknown removal clause", []string{
			"remove: Evacuation of /dev/sdb in progress since Mon Nov 30 07:04:12 2026",
			"\t1.00G copied quickly",
		}, `line 4: cannot parse remove line "1.00G copied quickly": unknown clause "1.00G copied quickly"`,
			poolOps{Removal: &Removal{State: ScanScanning, Vdev: "/dev/sdb", Start: utc(t, "2026-11-30 07:04:12")}}},
		{"unknown expansion clause", []string{
			"expand: expansion of raidz1-0 in progress since Mon Nov 30 07:04:12 2026",
			"\t1.02G / 3.00G copied at 12.0M/s, 34.00% done, taking a break",
		}, `line 4: cannot parse expand line "1.02G / 3.00G copied at 12.0M/s, 34.00% done, taking a break": unknown clause "taking a break"`,
			poolOps{Expansion: &Expansion{State: ScanScanning, Vdev: "raidz1-0", Start: utc(t, "2026-11-30 07:04:12"),
				Copied: fp(1.02 * statusGiB), Total: fp(3 * statusGiB), Rate: fp(12 * statusMiB), Progress: fp(0.34)}}},
		{"expansion in an unknown form", []string{
			"expand: expansion of raidz1-0 paused",
		}, `line 3: cannot parse expand: line "expansion of raidz1-0 paused": unknown form`, poolOps{}},
		{"checkpoint with a locale date", []string{
			"checkpoint: created Di 08 Jun 2021 08:08:45 CEST, consumes 468K",
		}, `line 3: cannot parse checkpoint: line "created Di 08 Jun 2021 08:08:45 CEST, consumes 468K": invalid date "Di 08 Jun 2021 08:08:45 CEST"`, poolOps{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, err := ParseStatus(strings.NewReader(statusText(append(tc.lines, statusMiniConfig, "errors: No known data errors")...)), time.UTC)
			if err != nil {
				t.Fatal(err)
			}
			p := st.Pools[0]
			if len(p.Warnings) != 1 || p.Warnings[0] != tc.want {
				t.Errorf("warnings %q, want [%q]", p.Warnings, tc.want)
			}
			if diff := cmp.Diff(tc.ops, opsOf(p)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if p.State != "online" || p.Root == nil || len(p.Root.Children) != 1 || p.DataErrors == nil {
				t.Errorf("pool read incompletely: state %q, root %+v, data errors %v", p.State, p.Root, p.DataErrors)
			}
		})
	}
	// A TRIM date in a locale not known keeps the state and progress.
	in := statusText(statusMiniConfig + "\t  sdb       ONLINE       0     0     0  (12% trimmed, started at Do 21 Feb 2019 19:32:44 CET)\n")
	st, err := ParseStatus(strings.NewReader(in), time.UTC)
	if err != nil {
		t.Fatal(err)
	}
	want := `line 8: vdev "sdb": (12% trimmed, started at Do 21 Feb 2019 19:32:44 CET): invalid date "Do 21 Feb 2019 19:32:44 CET"`
	if w := st.Pools[0].Warnings; len(w) != 1 || w[0] != want {
		t.Errorf("warnings %q, want [%q]", w, want)
	}
	if diff := cmp.Diff(&VdevOp{State: VdevOpActive, Progress: fp(0.12)}, statusVdevAt(t, st.Pools[0], "sdb").Trim); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// The JSON fields, named as removal_status_nvlist,
// raidz_expand_status_nvlist, checkpoint_status_nvlist and
// vdev_stats_nvlist (-t, -i) of zpool_main.c print them: exact
// (--json-int) and human-readable. No public output of them was found.
func TestParseStatusJSONOps(t *testing.T) {
	exact := `{"pools": {"tank": {"name": "tank", "state": "ONLINE",
	"removal_stats": {"name": "/dev/sdc", "vdev_type": "disk", "state": "SCANNING", "removing_vdev": 1,
		"start_time": 1796022000, "end_time": 0, "to_copy": 4294967296, "copied": 1073741824, "mapping_memory": 3575},
	"checkpoint_stats": {"state": "EXISTS", "start_time": 1796021000, "space": 1268777},
	"raidz_expand_stats": {"name": "raidz1", "state": "FINISHED", "expanding_vdev": 0,
		"start_time": 1796020000, "end_time": 1796020062, "to_reflow": 1610612736, "reflowed": 1610612736, "waiting_for_resilver": 0},
	"vdevs": {"tank": {"name": "tank", "vdev_type": "root", "state": "ONLINE", "vdevs": {
		"sdb": {"name": "sdb", "vdev_type": "disk", "state": "ONLINE",
			"init_state": "ACTIVE", "initialized": 268435456, "to_initialize": 1073741824, "init_time": 1796022100, "init_errors": 0,
			"trim_state": "COMPLETE", "trimmed": 1073741824, "to_trim": 1073741824, "trim_time": 1796022200, "trim_errors": 0, "trim_notsup": 0},
		"sdc": {"name": "sdc", "vdev_type": "disk", "state": "ONLINE", "init_state": "UNINITIALIZED", "trim_notsup": 1},
		"sdd": {"name": "sdd", "vdev_type": "disk", "state": "ONLINE", "trim_state": "UNTRIMMED", "trim_notsup": 0}}}}}}}`
	human := `{"pools": {"tank": {"name": "tank", "state": "ONLINE",
	"removal_stats": {"name": "/dev/sdc", "state": "FINISHED", "removing_vdev": "1",
		"start_time": "Mon Nov 30 07:00:00 2026", "end_time": "Mon Nov 30 07:01:40 2026", "to_copy": "4G", "copied": "4G", "mapping_memory": "3.49K"},
	"checkpoint_stats": {"state": "DISCARDING", "start_time": "-", "space": "1.21M"},
	"raidz_expand_stats": {"name": "raidz2", "state": "SCANNING", "expanding_vdev": "3",
		"start_time": "Mon Nov 30 07:00:00 2026", "end_time": "-", "to_reflow": "3G", "reflowed": "1G", "waiting_for_resilver": "1"},
	"vdevs": {"tank": {"name": "tank", "vdev_type": "root", "state": "ONLINE", "vdevs": {
		"sdb": {"name": "sdb", "vdev_type": "disk", "state": "ONLINE",
			"trim_state": "SUSPENDED", "trimmed": "256M", "to_trim": "1G", "trim_time": "Mon Nov 30 07:00:00 2026", "trim_errors": "0", "trim_notsup": "0",
			"init_state": "CANCELED", "initialized": "0", "to_initialize": "1G", "init_time": "Mon Nov 30 07:05:00 2026", "init_errors": "2"}}}}}}}`
	type result struct {
		Ops            poolOps
		SdbTrim        *VdevOp
		SdbInit        *VdevOp
		SdcTrim        *VdevOp
		SdcInit        *VdevOp
		SddTrim        *VdevOp
		SddInitNothing bool
	}
	read := func(t *testing.T, in string) (*Pool, result) {
		t.Helper()
		st, err := ParseStatusJSON(strings.NewReader(in))
		if err != nil {
			t.Fatal(err)
		}
		p := st.Pools[0]
		r := result{Ops: opsOf(p)}
		for _, v := range p.Root.Children {
			switch v.Name {
			case "sdb":
				r.SdbTrim, r.SdbInit = v.Trim, v.Initialize
			case "sdc":
				r.SdcTrim, r.SdcInit = v.Trim, v.Initialize
			case "sdd":
				r.SddTrim, r.SddInitNothing = v.Trim, v.Initialize == nil
			}
		}
		return p, r
	}
	t.Run("json-int", func(t *testing.T) {
		_, got := read(t, exact)
		want := result{
			Ops: poolOps{
				Removal: &Removal{State: ScanScanning, Vdev: "/dev/sdc", VdevIndex: ip(1), Start: time.Unix(1796022000, 0).UTC(),
					Copied: fp(statusGiB), Total: fp(4 * statusGiB), Progress: fp(0.25), MappingMemory: fp(3575)},
				Checkpoint: &Checkpoint{State: CheckpointExists, Created: time.Unix(1796021000, 0).UTC(), Space: fp(1268777)},
				Expansion: &Expansion{State: ScanFinished, Vdev: "raidz1-0", Start: time.Unix(1796020000, 0).UTC(), End: time.Unix(1796020062, 0).UTC(),
					Copied: fp(1.5 * statusGiB), Total: fp(1.5 * statusGiB), Duration: fp(62)},
			},
			SdbTrim: &VdevOp{State: VdevOpComplete, Progress: fp(1), End: time.Unix(1796022200, 0).UTC(),
				Done: fp(statusGiB), Total: fp(statusGiB), Errors: fp(0)},
			SdbInit: &VdevOp{State: VdevOpActive, Progress: fp(0.25), Start: time.Unix(1796022100, 0).UTC(),
				Done: fp(256 * statusMiB), Total: fp(statusGiB), Errors: fp(0)},
			SdcTrim:        &VdevOp{State: VdevOpUnsupported},
			SdcInit:        &VdevOp{State: VdevOpNone},
			SddTrim:        &VdevOp{State: VdevOpNone},
			SddInitNothing: true,
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
	})
	t.Run("human-readable", func(t *testing.T) {
		local := func(s string) time.Time {
			v, err := time.ParseInLocation(time.DateTime, s, time.Local)
			if err != nil {
				t.Fatal(err)
			}
			return v
		}
		_, got := read(t, human)
		want := result{
			Ops: poolOps{
				Removal: &Removal{State: ScanFinished, Vdev: "/dev/sdc", VdevIndex: ip(1),
					Start: local("2026-11-30 07:00:00"), End: local("2026-11-30 07:01:40"),
					Copied: fp(4 * statusGiB), Total: fp(4 * statusGiB), Duration: fp(100), MappingMemory: fp(3.49 * statusKiB)},
				Checkpoint: &Checkpoint{State: CheckpointDiscarding, Space: fp(1.21 * statusMiB)},
				Expansion: &Expansion{State: ScanScanning, Vdev: "raidz2-3", Start: local("2026-11-30 07:00:00"),
					Copied: fp(statusGiB), Total: fp(3 * statusGiB), Progress: fp(1.0 / 3), WaitingForResilver: true},
			},
			SdbTrim: &VdevOp{State: VdevOpSuspended, Progress: fp(0.25), Start: local("2026-11-30 07:00:00"),
				Done: fp(256 * statusMiB), Total: fp(statusGiB), Errors: fp(0)},
			SdbInit: &VdevOp{State: VdevOpCanceled, End: local("2026-11-30 07:05:00"),
				Done: fp(0), Total: fp(statusGiB), Errors: fp(2)},
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
	})
	t.Run("none", func(t *testing.T) {
		p, got := read(t, `{"pools": {"tank": {"name": "tank", "state": "ONLINE",
			"checkpoint_stats": {"state": "NONE", "start_time": 0, "space": 0},
			"removal_stats": {"state": "NONE"}}}}`)
		if diff := cmp.Diff(result{}, got); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
		if p.Root == nil {
			t.Error("no root")
		}
	})
	t.Run("bad field", func(t *testing.T) {
		_, err := ParseStatusJSON(strings.NewReader(`{"pools": {"tank": {"name": "tank",
			"removal_stats": {"state": "SCANNING",
			"copied": "lots"}}}}`))
		if err == nil || !strings.Contains(err.Error(), `line 3: cannot parse copied "lots" as a number`) {
			t.Errorf("error %v", err)
		}
	})
}

// Estimate derives rates and remaining times as print_removal_status and
// print_raidz_expand_status do, from the time since the start.
func TestCopyEstimate(t *testing.T) {
	start := time.Unix(1796022000, 0)
	r := &Removal{State: ScanScanning, Start: start, Copied: fp(100 * statusMiB), Total: fp(400 * statusMiB)}
	r.Estimate(start.Add(100 * time.Second))
	if diff := cmp.Diff(&Removal{State: ScanScanning, Start: start, Copied: fp(100 * statusMiB), Total: fp(400 * statusMiB),
		Rate: fp(statusMiB), Remaining: fp(300)}, r); diff != "" {
		t.Errorf("removal (-want +got):\n%s", diff)
	}
	// Past 30 days to go, zpool gives no estimate.
	slow := &Expansion{State: ScanScanning, Start: start, Copied: fp(1), Total: fp(statusTiB)}
	slow.Estimate(start.Add(time.Second))
	if slow.Remaining != nil || slow.Rate == nil || *slow.Rate != 1 {
		t.Errorf("slow expansion: rate %v, remaining %v", slow.Rate, slow.Remaining)
	}
	waiting := &Expansion{State: ScanScanning, Start: start, Copied: fp(statusMiB), Total: fp(2 * statusMiB), WaitingForResilver: true}
	waiting.Estimate(start.Add(time.Second))
	if waiting.Remaining != nil || waiting.Rate == nil {
		t.Errorf("waiting expansion: rate %v, remaining %v", waiting.Rate, waiting.Remaining)
	}
	done := &Removal{State: ScanFinished, Start: start, Copied: fp(1), Total: fp(1)}
	done.Estimate(start.Add(time.Hour))
	if done.Rate != nil || done.Remaining != nil {
		t.Errorf("finished removal: rate %v, remaining %v", done.Rate, done.Remaining)
	}
}

func TestAnnotations(t *testing.T) {
	for _, c := range []struct {
		note string
		want []string
	}{
		{"(uninitialized)  (untrimmed)", []string{"uninitialized", "untrimmed"}},
		{"was /dev/sdb1  (resilvering)", []string{"resilvering"}},
		{"(a (b) c) (d", []string{"b"}},
		{"no annotation", nil},
		{"(unclosed", nil},
		{"()", []string{""}},
	} {
		if got := slices.Collect(annotations(c.note)); !slices.Equal(got, c.want) {
			t.Errorf("annotations(%q) = %q, want %q", c.note, got, c.want)
		}
	}
}
