package prometheus3

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zpool-exporter/zpool_exporter/internal/testkit/e2e"
	"github.com/zpool-exporter/zpool_exporter/tests/internal/repotest"
)

// One Prometheus scrapes the exporter over a degraded pool twice, as job
// zfs and as job zpool, with the shipped rules moved to job zpool as the
// Helm chart moves them (the selector's text replaced, which the
// dashboards module shows equals generating them for that job). Every
// board query answers for job zpool as for job zfs, and ZFSPoolNotOnline
// fires for job zpool only. With the variable set to a job that scrapes
// nothing, no board query answers.
func TestBoardsAndAlertsUnderAnotherJob(t *testing.T) {
	prom, exporter := binaries(t)
	// The degraded pool's step alone, with the kstats of the step before
	// it (02-offline has none of its own).
	replay := walkReplay(t, "01-created", "02-offline")
	if err := os.RemoveAll(filepath.Join(replay, "000")); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(replay, "001"), filepath.Join(replay, "000")); err != nil {
		t.Fatal(err)
	}
	e := e2e.Start(t, exporter, nil, "--zpool.replay-dir="+replay)
	target := strings.TrimPrefix(e.URL, "http://")

	rules := t.TempDir()
	shipped, err := filepath.Glob(repotest.Path("dashboards", "out", "rules", "*.yaml"))
	if err != nil || len(shipped) == 0 {
		t.Fatalf("no rule files in dashboards/out/rules (%v)", err)
	}
	for _, path := range shipped {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		moved := strings.ReplaceAll(string(data), `job="zfs"`, `job="zpool"`)
		if strings.Contains(moved, `job=`) && !strings.Contains(moved, `job="zpool"`) {
			t.Fatalf("%s selects a job other than zfs", path)
		}
		if err := os.WriteFile(filepath.Join(rules, filepath.Base(path)), []byte(moved), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	started := time.Now()
	p := startPrometheusIn(t, prom, everySecond(fmt.Sprintf(`  - job_name: zfs
    static_configs: [{targets: [%[1]q]}]
  - job_name: zpool
    static_configs: [{targets: [%[1]q]}]
`, target)), rules)

	// The boards, with their job variable set to each job in turn.
	waitFor(t, "both jobs scraped", func() bool {
		s, err := p.query(`count by (job) (zfs_pool_state)`)
		return err == nil && len(s) == 2
	})
	time.Sleep(12 * time.Second) // rates over the boards' 9s interval, and the recording rules
	// answers counts each board query's series with the job variable set
	// to job; drawn counts only those with something to draw: a value
	// other than 0, or a job (the stat panels' "or vector(0)" is neither).
	answers := func(job string, drawn bool) map[string]int {
		got := map[string]int{}
		values := map[string]string{"job": job, "instance": ".*", "pool": ".*", "dataset": ".*", "__rate_interval": "9s", "__interval": "1s", "__range": "1m"}
		for _, q := range boardQueries(t, values) {
			got[q.where] += 0
			series, err := p.query(q.expr)
			if err != nil {
				t.Errorf("%s, job %s: %v", q.where, job, err)
				continue
			}
			for _, s := range series {
				if !drawn || s.Metric["job"] != "" || s.float() != 0 {
					got[q.where]++
				}
			}
		}
		return got
	}
	asZFS, asZpool := answers("zfs", false), answers("zpool", false)
	// A job that scrapes nothing draws nothing: the boards pick their
	// series by the variable, not by a job written into them.
	for where, n := range answers("nobody", true) {
		if n > 0 {
			t.Errorf("%s: %d series with the job variable set to a job that scrapes nothing", where, n)
		}
	}
	answered := 0
	for where, n := range asZFS {
		if asZpool[where] != n {
			t.Errorf("%s: %d series for job zpool, %d for job zfs", where, asZpool[where], n)
		}
		if n > 0 {
			answered++
		}
	}
	t.Logf("%d board queries, %d of them answered under both jobs alike", len(asZFS), answered)
	// A degraded pool without datasets, whose counters stand still: about
	// half the panels have something to draw (101 of 218 when written).
	if answered < len(asZFS)/3 {
		t.Errorf("only %d of %d board queries answered: the replay did not reach Prometheus", answered, len(asZFS))
	}

	// ZFSPoolNotOnline waits a minute (for: 1m) before it fires.
	deadline := started.Add(100 * time.Second)
	for {
		firing := p.mustQuery(t, `ALERTS{alertname="ZFSPoolNotOnline", alertstate="firing"}`)
		jobs := map[string]bool{}
		for _, s := range firing {
			jobs[s.Metric["job"]] = true
		}
		if jobs["zfs"] {
			t.Fatalf("ZFSPoolNotOnline fired for job zfs under rules moved to job zpool: %v", firing)
		}
		if jobs["zpool"] {
			t.Logf("ZFSPoolNotOnline firing for job zpool after %s: %v", time.Since(started).Round(time.Second), firing[0].Metric)
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("ZFSPoolNotOnline did not fire for job zpool within %s; pending: %v", time.Since(started).Round(time.Second),
				p.mustQuery(t, `ALERTS{alertname="ZFSPoolNotOnline"}`))
		}
		time.Sleep(2 * time.Second)
	}
}
