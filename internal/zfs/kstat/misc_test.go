package kstat

import (
	"bytes"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/zpool-exporter/zpool_exporter/internal/testkit/sample"
)

// The module-wide kstats of real Linux systems, from ZFS on Linux 0.6 to
// OpenZFS 2.3, through MiscFromNamed.
func TestMiscFromNamedCorpus(t *testing.T) {
	dir := sample.Dir(t, "corpus/kstat-linux")
	for _, tc := range []struct {
		file, kstat string
		entries     int                // numeric entries kept
		want        map[string]float64 // a few of them
		absent      []string           // wrapped below zero, or not in this release
	}{
		{"zil-openzfs23", MiscZIL, 20, map[string]float64{"zil_commit_count": 52922839, "zil_itx_needcopy_bytes": 318066453032, "zil_itx_metaslab_normal_alloc": 743618220032}, nil},
		{"zil-zol075", MiscZIL, 12, map[string]float64{"zil_commit_count": 10, "zil_itx_metaslab_slog_bytes": 0}, []string{"zil_itx_needcopy_bytes", "zil_commit_error_count", "zil_itx_metaslab_normal_write"}},
		{"dmu_tx-openzfs23", MiscDMUTx, 13, map[string]float64{"dmu_tx_assigned": 588581682, "dmu_tx_dirty_delay": 1834959, "dmu_tx_dirty_throttle": 1}, nil},
		{"dmu_tx-zol06", MiscDMUTx, 11, map[string]float64{"dmu_tx_assigned": 3532844}, []string{"dmu_tx_wrlog_delay", "dmu_tx_dirty_frees_delay"}},
		{"abdstats-openzfs23", MiscABD, 18, map[string]float64{"linear_cnt": 92773, "struct_size": 43472448, "scatter_chunk_waste": 89159680}, []string{"scatter_cnt", "scatter_data_size"}},
		{"abdstats-zol075", MiscABD, 21, map[string]float64{"scatter_cnt": 1, "scatter_data_size": 16384, "linear_data_size": 223232}, nil},
		{"zfetchstats-openzfs23", MiscPrefetch, 8, map[string]float64{"hits": 1382833604, "misses": 572255453, "stride": 18091715, "io_active": 0}, nil},
		{"zfetchstats-zol06", MiscPrefetch, 11, map[string]float64{"hits": 7067992, "misses": 11}, []string{"max_streams", "io_issued"}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			f := sample.MustRead(t, filepath.Join(dir, tc.file+".txt"))
			n, err := ParseNamed(bytes.NewReader(f.Body))
			if err != nil {
				t.Fatal(err)
			}
			m := MiscFromNamed(tc.kstat, n)
			if m.Name != tc.kstat || len(m.Stats) != tc.entries {
				t.Errorf("%s with %d statistics, want %s with %d", m.Name, len(m.Stats), tc.kstat, tc.entries)
			}
			wantStats(t, tc.file, m.Stats, tc.want)
			for _, name := range tc.absent {
				if v, ok := m.Get(name); ok {
					t.Errorf("%s = %v, want it absent", name, v)
				}
			}
		})
	}
}

func TestMiscFromSysctl(t *testing.T) {
	stats := parseSysctlFixture(t, "freebsd-sysctl-zil-dmu_tx-abdstats")
	for _, tc := range []struct {
		kstat   string
		entries int
		want    map[string]float64
	}{
		{MiscZIL, 20, map[string]float64{"zil_commit_count": 214930, "zil_commit_writer_count": 198220, "zil_itx_metaslab_slog_count": 220417}},
		{MiscDMUTx, 13, map[string]float64{"dmu_tx_assigned": 4410922, "dmu_tx_dirty_delay": 88412, "dmu_tx_dirty_over_max": 12}},
		{MiscABD, 6, map[string]float64{"scatter_cnt": 41022, "scatter_chunk_waste": 626176}},
	} {
		m, ok := MiscFromSysctl(stats, tc.kstat)
		if !ok || m.Name != tc.kstat || len(m.Stats) != tc.entries {
			t.Errorf("%s: found %v, %d statistics; want %d", tc.kstat, ok, len(m.Stats), tc.entries)
		}
		wantStats(t, tc.kstat, m.Stats, tc.want)
	}
	if m, ok := MiscFromSysctl(stats, MiscPrefetch); ok {
		t.Errorf("zfetchstats found in output without it: %+v", m)
	}
}

// FreeBSD prints what it was asked for: kstats of other names, deeper
// names and text are not statistics of the kstat; a wrapped one is left out.
func TestMiscFromSysctlEdges(t *testing.T) {
	out := strings.Join([]string{
		"kstat.zfs.misc.zilstats.hits: 4",
		"kstat.zfs.misc.zil.zil_commit_count: 7",
		"kstat.zfs.misc.zil.deeper.name: 1",
		"kstat.zfs.misc.zil.text: not a number",
		"kstat.zfs.misc.zil.zil_itx_needcopy_bytes: 18446744073709537686",
		"kstat.zfs.tank.misc.zil.zil_commit_count: 9",
		"vfs.zfs.zil_slog_bulk: 786432",
	}, "\n")
	stats, err := ParseSysctl(strings.NewReader(out))
	if err != nil {
		t.Fatal(err)
	}
	m, ok := MiscFromSysctl(stats, MiscZIL)
	if want := map[string]float64{"zil_commit_count": 7}; !ok || !reflect.DeepEqual(m.Stats, want) {
		t.Errorf("zil = %v (found %v), want %v", m.Stats, ok, want)
	}
}

func TestMiscFromSysctlCorpus(t *testing.T) {
	f := sample.MustRead(t, filepath.Join(sample.Dir(t, "corpus/kstat-freebsd"), "sysctl-zfetchstats-freebsd14-telegraf.txt"))
	stats, err := ParseSysctl(bytes.NewReader(f.Body))
	if err != nil {
		t.Fatal(err)
	}
	m, ok := MiscFromSysctl(stats, MiscPrefetch)
	want := map[string]float64{"hits": 6439, "misses": 14538, "max_streams": 9411, "io_issued": 2197, "io_active": 0}
	if !ok || !reflect.DeepEqual(m.Stats, want) {
		t.Errorf("zfetchstats = %v (found %v), want %v", m.Stats, ok, want)
	}
}

func TestMiscFromKstatP(t *testing.T) {
	stats, err := ParseKstatP(fixture(t, "illumos-kstat-p-abdstats-zfetchstats"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		kstat string
		want  map[string]float64
	}{
		{MiscABD, map[string]float64{"struct_size": 11836928, "scatter_cnt": 120447, "scatter_data_size": 10744295424, "scatter_chunk_waste": 5009920, "linear_cnt": 1873, "linear_data_size": 168820736}},
		{MiscPrefetch, map[string]float64{"hits": 3310227, "misses": 1220439, "max_streams": 88120}},
	} {
		m, ok := MiscFromKstatP(stats, tc.kstat)
		// Exactly the statistics: no class, crtime or snaptime.
		if !ok || !reflect.DeepEqual(m.Stats, tc.want) {
			t.Errorf("%s = %v (found %v), want %v", tc.kstat, m.Stats, ok, tc.want)
		}
	}
	for _, name := range []string{MiscZIL, MiscDMUTx} {
		if _, ok := MiscFromKstatP(stats, name); ok {
			t.Errorf("%s found in output without it", name)
		}
	}
}

// A pool's I/O kstat is named after the pool, and a pool name may hold
// colons, spaces and dots.
func TestParseKstatPPoolNames(t *testing.T) {
	out := "zfs:0:db:a:nread\t10\nzfs:0:my pool:wlentime\t1.5\nzfs:0:my pool:nread\t20\nzfs:0:tank.2:reads\t3\n"
	stats, err := ParseKstatP(strings.NewReader(out))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range stats {
		got = append(got, s.Name+"|"+s.Statistic)
	}
	want := []string{"db:a|nread", "my pool|wlentime", "my pool|nread", "tank.2|reads"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("name|statistic = %q, want %q", got, want)
	}
	for _, bad := range []string{"zfs:0:nread\t1", "zfs:0::nread\t1", "zfs:0:tank:\t1", ":0:tank:nread\t1", "zfs:x:tank:nread\t1"} {
		if stats, err := ParseKstatP(strings.NewReader(bad)); err == nil || !strings.HasPrefix(err.Error(), "line 1: ") {
			t.Errorf("%q: %d statistics, error %v; want a line 1 error", bad, len(stats), err)
		}
	}
}
