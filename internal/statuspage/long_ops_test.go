package statuspage

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"

	"github.com/zpool-exporter/zpool_exporter/internal/testkit/zpooltest"
	"github.com/zpool-exporter/zpool_exporter/internal/zfs/zpool"
)

// fixtures is the zpool package's directory of real outputs.
const fixtures = "../../internal/zfs/zpool/testdata"

// fixturePage renders the page of one captured `zpool status`, parsed as
// the exporter parses it and read at now. A JSON status is estimated at
// now, as the exporter does; of a text one, the page is also checked to
// keep the capture's tree.
func fixturePage(t *testing.T, fixture string, now time.Time) *html.Node {
	t.Helper()
	path := filepath.Join(fixtures, fixture)
	st, json := zpooltest.ParseStatus(t, path)
	if json {
		st.Estimate(now)
	}
	read := func(context.Context) Reading { return Reading{Time: now, Status: st} }
	_, body := get(t, New(read, Options{MetricsPath: "/metrics"}), "/")
	doc := parse(t, body)
	// configRows reads tab-indented tables: the pasted public outputs
	// lost their tabs.
	if want := configRows(t, path); !json && len(want) > 0 {
		if got := pageRows(t, doc); !slices.Equal(got, want) {
			t.Errorf("rows differ from the capture\n got: %v\nwant: %v", got, want)
		}
	}
	return doc
}

// poolSection is the section of one pool.
func poolSection(t *testing.T, doc *html.Node, pool string) *html.Node {
	t.Helper()
	s := findAll(doc, func(n *html.Node) bool { return n.Data == "section" && attr(n, "data-pool") == pool })
	if len(s) != 1 {
		t.Fatalf("%d sections for pool %s", len(s), pool)
	}
	return s[0]
}

// scanOf is the one scan block of a function in a section.
func scanOf(t *testing.T, section *html.Node, function string) *html.Node {
	t.Helper()
	s := findAll(section, func(n *html.Node) bool { return hasClass(n, "scan") && attr(n, "data-function") == function })
	if len(s) != 1 {
		t.Fatalf("%d %s blocks in pool %s", len(s), function, attr(section, "data-pool"))
	}
	return s[0]
}

// barWidthOf is the style of a scan's bar filling, "" without a bar.
func barWidthOf(scan *html.Node) string {
	if fill := findAll(scan, func(n *html.Node) bool { return hasClass(n, "fill") }); len(fill) == 1 {
		return attr(fill[0], "style")
	}
	return ""
}

// noteOf is the note of the one row whose vdev name ends in suffix.
func noteOf(t *testing.T, section *html.Node, suffix string) string {
	t.Helper()
	rows := findAll(section, func(n *html.Node) bool {
		return n.Data == "tr" && hasClass(n, "vdev") && strings.HasSuffix(attr(n, "data-vdev"), suffix)
	})
	if len(rows) != 1 {
		t.Fatalf("%d rows end in %q in pool %s", len(rows), suffix, attr(section, "data-pool"))
	}
	return text(findAll(rows[0], func(n *html.Node) bool { return hasClass(n, "note") })[0])
}

// containsAll reports, as a test error, each of want that got lacks.
func containsAll(t *testing.T, what, got string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(got, w) {
			t.Errorf("%s %q lacks %q", what, got, w)
		}
	}
}

// A running removal reads as a scan of function remove, with a bar, the
// bytes copied out of the total, the rate and the time left; the vdev
// being evacuated and its leaves say so in the tree.
func TestRunningRemoval(t *testing.T) {
	for _, c := range []struct {
		fixture, pool, bar string
		want               []string
		notes              map[string]string // by suffix of the vdev's name
	}{
		{"openzfs-2.3-guest/15-removing__zpool_status.txt", "opr", "width: 0.1%",
			[]string{"removal: copying, 0.1% done", "copied 18.0 KiB of 32.0 MiB", "at 3.00 KiB/s", "time left 3h 01m", "started " + clock(t, "2026-12-03 05:46:57")},
			map[string]string{"mirror-1": "removing", "/f07": "non-allocating", "/f05": ""}},
		{"openzfs-2.3-guest/15-removing__zpool_status_-j_--json-int.txt", "opr", "width: 0.1%",
			[]string{"removal: copying, 0.1% done", "copied 18.0 KiB of 32.0 MiB", "at 3.00 KiB/s", "time left 3h 01m"},
			map[string]string{"mirror-1": "removing", "/f08": "non-allocating"}},
		{"openzfs-2.4-guest/15-removing__zpool_status.txt", "opr", "width: 0.1%",
			[]string{"copied 22.0 KiB of 34.0 MiB", "at 5.50 KiB/s", "time left 1h 45m"},
			map[string]string{"mirror-1": "removing"}},
		{"openzfs-2.1-guest/15-removing__zpool_status.txt", "opr", "width: 0.0%",
			[]string{"0.0% done", "copied 10.0 KiB of 30.2 MiB", "time left 3h 26m"},
			map[string]string{"mirror-1": "", "/f07": ""}}, // zpool 2.1 printed no notes there
		{"public/remove-evacuation-in-progress-freebsd.txt", "zroot", "width: 22.6%",
			[]string{"removal: copying, 22.6% done", "copied 158 MiB of 698 MiB", "at 39.4 MiB/s"},
			map[string]string{"da0p4": "removing", "da1p4": ""}},
	} {
		t.Run(c.fixture, func(t *testing.T) {
			// Six seconds after the JSON's removal started: 18 KiB at 3 KiB/s.
			section := poolSection(t, fixturePage(t, c.fixture, time.Date(2026, 12, 3, 5, 47, 3, 0, time.UTC)), c.pool)
			scan := scanOf(t, section, "remove")
			if attr(scan, "data-state") != zpool.ScanScanning {
				t.Errorf("removal in state %q", attr(scan, "data-state"))
			}
			if got := barWidthOf(scan); got != c.bar {
				t.Errorf("bar %q, want %q", got, c.bar)
			}
			containsAll(t, "removal", text(scan), c.want...)
			for suffix, want := range c.notes {
				if got := noteOf(t, section, suffix); got != want {
					t.Errorf("note of %s %q, want %q", suffix, got, want)
				}
			}
		})
	}
}

// A finished removal stays in zpool status with the memory its mapping of
// moved blocks costs, without a bar.
func TestFinishedRemoval(t *testing.T) {
	for _, c := range []struct {
		fixture, pool string
		want          []string
	}{
		{"openzfs-2.3-guest/16-removed__zpool_status.txt", "opr",
			[]string{"removal: finished", "copied 32.0 MiB", "ended " + clock(t, "2026-12-03 05:47:16"), "memory for removed device mappings 144 B"}},
		{"openzfs-2.3-guest/16-removed__zpool_status_-j_--json-int.txt", "opr",
			[]string{"removal: finished", "copied 32.0 MiB of 32.0 MiB", "took 19s", "started " + clock(t, "2026-12-03 05:46:57"), "memory for removed device mappings 144 B"}},
		{"openzfs-2.4-guest/16-removed__zpool_status.txt", "opr",
			[]string{"copied 34.0 MiB", "memory for removed device mappings 120 B"}},
		{"public/remove-finished-o3x-blank-lines-stripped.txt", "zshrinky",
			[]string{"removal: finished", "copied 744 MiB", "ended " + clock(t, "2023-04-26 00:08:13"), "memory for removed device mappings 18.2 KiB"}},
	} {
		t.Run(c.fixture, func(t *testing.T) {
			scan := scanOf(t, poolSection(t, fixturePage(t, c.fixture, time.Now()), c.pool), "remove")
			if attr(scan, "data-state") != zpool.ScanFinished || barWidthOf(scan) != "" {
				t.Errorf("removal in state %q with bar %q", attr(scan, "data-state"), barWidthOf(scan))
			}
			containsAll(t, "removal", text(scan), c.want...)
			// The text prints the duration in whole minutes: "0h0m".
			if strings.Contains(text(scan), "took 0s") {
				t.Errorf("removal %q took no time", text(scan))
			}
		})
	}
}

// A removal finished under a running resilver: both show, and the new leaf
// is noted as resilvering.
func TestRemovalBesideAResilver(t *testing.T) {
	section := poolSection(t, fixturePage(t, "public/remove-finished-resilvering-freebsd.txt", time.Now()), "zroot")
	resilver, removal := scanOf(t, section, "resilver"), scanOf(t, section, "remove")
	containsAll(t, "resilver", text(resilver), "resilver: scanning, 23.1% done", "issued 161 MiB of 698 MiB", "resilvered 148 MiB")
	containsAll(t, "removal", text(removal), "removal: finished", "copied 698 MiB", "memory for removed device mappings 10.1 KiB")
	if got := noteOf(t, section, "da0p4"); got != "resilvering" {
		t.Errorf("note of the resilvering leaf %q", got)
	}
}

// A RAID-Z expansion reads as a scan of function expand on its raidz vdev.
func TestExpansion(t *testing.T) {
	for _, c := range []struct {
		fixture, state, bar string
		want                []string
	}{
		{"openzfs-2.3-guest/13-expanding__zpool_status.txt", zpool.ScanScanning, "width: 19.9%",
			[]string{"expansion of raidz1-0: copying, 19.9% done", "copied 19.1 MiB of 96.4 MiB", "at 1.91 MiB/s", "time left 40s", "started " + clock(t, "2026-12-03 05:46:05")}},
		{"openzfs-2.3-guest/13-expanding__zpool_status_-j_--json-int.txt", zpool.ScanScanning, "width: 19.9%",
			[]string{"expansion of raidz1-0: copying, 19.9% done", "copied 19.1 MiB of 96.4 MiB", "at 1.91 MiB/s", "time left 40s"}},
		{"openzfs-2.4-guest/13-expanding__zpool_status.txt", zpool.ScanScanning, "width: 19.9%",
			[]string{"expansion of raidz1-0: copying, 19.9% done", "copied 19.1 MiB of 96.3 MiB", "time left 32s"}},
		{"openzfs-2.3-guest/14-expanded__zpool_status.txt", zpool.ScanFinished, "",
			[]string{"expansion of raidz1-0: finished", "copied 82.6 MiB", "took 23s", "ended " + clock(t, "2026-12-03 05:46:28")}},
		{"openzfs-2.4-guest/14-expanded__zpool_status_-j_--json-int.txt", zpool.ScanFinished, "",
			[]string{"expansion of raidz1-0: finished", "copied 82.6 MiB of 96.5 MiB", "took 20s", "started " + clock(t, "2026-12-03 06:00:40")}},
	} {
		t.Run(c.fixture, func(t *testing.T) {
			// Ten seconds after the 2.3 JSON's expansion started: 19.1 MiB
			// at 1.91 MiB/s.
			scan := scanOf(t, poolSection(t, fixturePage(t, c.fixture, time.Date(2026, 12, 3, 5, 46, 15, 0, time.UTC)), "opx"), "expand")
			if attr(scan, "data-state") != c.state || barWidthOf(scan) != c.bar {
				t.Errorf("expansion in state %q with bar %q, want %q with %q", attr(scan, "data-state"), barWidthOf(scan), c.state, c.bar)
			}
			containsAll(t, "expansion", text(scan), c.want...)
		})
	}
}

// A checkpoint is a line under the scans: the space it holds and its age.
func TestCheckpoint(t *testing.T) {
	for _, c := range []struct {
		fixture, created, space string
	}{
		{"openzfs-2.3-guest/17-checkpoint__zpool_status.txt", "2026-12-03 05:47:29", "64.1 MiB"},
		{"openzfs-2.3-guest/17-checkpoint__zpool_status_-j_--json-int.txt", "2026-12-03 05:47:29", "64.1 MiB"},
		{"openzfs-2.1-guest/17-checkpoint__zpool_status.txt", "2026-12-03 06:08:07", "64.1 MiB"},
	} {
		t.Run(c.fixture, func(t *testing.T) {
			created, err := time.Parse(time.DateTime, c.created)
			if err != nil {
				t.Fatal(err)
			}
			doc := fixturePage(t, c.fixture, created.Add(2*time.Hour+3*time.Minute))
			all := findAll(doc, func(n *html.Node) bool { return hasClass(n, "checkpoint") })
			mine := findAll(poolSection(t, doc, "opr"), func(n *html.Node) bool { return hasClass(n, "checkpoint") })
			if len(all) != 1 || len(mine) != 1 {
				t.Fatalf("%d checkpoint lines, %d of pool opr; want the one of opr", len(all), len(mine))
			}
			if attr(mine[0], "data-state") != zpool.CheckpointExists {
				t.Errorf("checkpoint in state %q", attr(mine[0], "data-state"))
			}
			containsAll(t, "checkpoint", text(mine[0]), "holds "+c.space, "created "+formatClock(created)+" (2h 03m ago)")
		})
	}
}

// `zpool status -t -i` on a pool with one leaf trimming and the other's
// initialization suspended: each leaf's row says its own, in short, from
// the text and from JSON alike.
func TestTrimAndInitializeNotes(t *testing.T) {
	for _, c := range []struct {
		fixture, f05, f06 string
	}{
		{"openzfs-2.3-guest/18-trim-initialize__zpool_status_-t_-i_opr.txt", "trimming 18.0%", "initialization suspended at 7.0%"},
		{"openzfs-2.3-guest/18-trim-initialize__zpool_status_-j_--json-int_-t_-i_opr.txt", "trimming 18.2%", "initialization suspended at 7.1%"},
		{"openzfs-2.4-guest/18-trim-initialize__zpool_status_-t_-i_opr.txt", "", "initialization suspended at 7.0%"}, // TRIM complete
		{"openzfs-2.1-guest/18-trim-initialize__zpool_status_-t_-i_opr.txt", "trimming 37.0%", "initialization suspended at 6.0%"},
	} {
		t.Run(c.fixture, func(t *testing.T) {
			section := poolSection(t, fixturePage(t, c.fixture, time.Now()), "opr")
			for suffix, want := range map[string]string{"/f05": c.f05, "/f06": c.f06} {
				got := noteOf(t, section, suffix)
				if got != want {
					t.Errorf("note of %s %q, want %q", suffix, got, want)
				}
			}
			for _, suffix := range []string{"opr", "mirror-0"} {
				if got := noteOf(t, section, suffix); got != "" {
					t.Errorf("note of %s %q, want none", suffix, got)
				}
			}
		})
	}
}

// Notes that no capture shows: what the note alone tells stays, beside
// the activities and the operations the fields tell.
func TestNote(t *testing.T) {
	pct := func(x float64) *float64 { return &x }
	for _, c := range []struct {
		vdev zpool.Vdev
		want string
	}{
		{zpool.Vdev{Note: "was /dev/sdb1  (resilvering)", Activities: []string{zpool.ActivityResilvering}}, "was /dev/sdb1 · resilvering"},
		{zpool.Vdev{Note: "(awaiting resilver)", Activities: []string{zpool.ActivityAwaitingResilver}}, "awaiting resilver"},
		{zpool.Vdev{Note: "(trimming)", Trim: &zpool.VdevOp{State: zpool.VdevOpActive}}, "trimming"},
		{zpool.Vdev{Trim: &zpool.VdevOp{State: zpool.VdevOpSuspended, Progress: pct(0.5)}}, "TRIM suspended at 50.0%"},
		{zpool.Vdev{Note: "(100% initialized, completed at Thu Dec  3 05:47:46 2026)  (trim unsupported)",
			Initialize: &zpool.VdevOp{State: zpool.VdevOpComplete}, Trim: &zpool.VdevOp{State: zpool.VdevOpUnsupported}}, ""},
		{zpool.Vdev{Note: "16.6M resilvered"}, "16.6M resilvered"},
		{zpool.Vdev{Note: "too many errors"}, "too many errors"},
	} {
		if got := note(&c.vdev); got != c.want {
			t.Errorf("note of %q = %q, want %q", c.vdev.Note, got, c.want)
		}
	}
}

// States that no capture shows: an expansion waiting for a resilver, and
// a checkpoint being discarded.
func TestWaitingExpansionAndDiscardedCheckpoint(t *testing.T) {
	size := func(x float64) *float64 { return &x }
	now := time.Date(2026, 12, 3, 6, 0, 0, 0, time.UTC)
	st := &zpool.Status{Pools: []*zpool.Pool{{
		Name: "tank", State: "online",
		Expansion: &zpool.Expansion{State: zpool.ScanScanning, Vdev: "raidz2-0", Start: now.Add(-time.Hour),
			Copied: size(1 << 30), Total: size(4 << 30), Progress: size(0.25), WaitingForResilver: true},
		Checkpoint: &zpool.Checkpoint{State: zpool.CheckpointDiscarding, Space: size(3 << 20)},
	}}}
	read := func(context.Context) Reading { return Reading{Time: now, Status: st} }
	_, body := get(t, New(read, Options{}), "/")
	section := poolSection(t, parse(t, body), "tank")
	scan := scanOf(t, section, "expand")
	containsAll(t, "expansion", text(scan), "expansion of raidz2-0: waiting for a resilver or zpool clear, 25.0% done", "copied 1.00 GiB of 4.00 GiB")
	if strings.Contains(text(scan), "time left") {
		t.Errorf("a waiting expansion %q has a time left", text(scan))
	}
	checkpoint := findAll(section, func(n *html.Node) bool { return hasClass(n, "checkpoint") })
	if len(checkpoint) != 1 || attr(checkpoint[0], "data-state") != zpool.CheckpointDiscarding {
		t.Fatalf("no discarding checkpoint line")
	}
	containsAll(t, "checkpoint", text(checkpoint[0]), "being discarded, 3.00 MiB still to free")
}

// One instant reads the same on the page whichever zone it was read in:
// JSON times come as UTC, text ones in the zone zpool printed.
func TestClockNamesOneZone(t *testing.T) {
	at := time.Date(2026, 12, 3, 5, 47, 29, 0, time.UTC)
	if utc, east := formatClock(at), formatClock(at.In(time.FixedZone("UTC+9", 9*3600))); utc != east {
		t.Errorf("the same instant reads %q and %q", utc, east)
	}
}

// clock is how the page shows a time zpool printed in UTC.
func clock(t *testing.T, utc string) string {
	t.Helper()
	at, err := time.Parse(time.DateTime, utc)
	if err != nil {
		t.Fatal(err)
	}
	return formatClock(at)
}
