package zfs

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/zpool-exporter/zpool_exporter/internal/parse"
	"github.com/zpool-exporter/zpool_exporter/internal/testkit/sample"
)

const (
	listHp    = "zpool list -v -Hp"
	listH     = "zpool list -v -H"
	listTable = "zpool list -v"
)

// The form the exporter runs, on the OpenZFS 2.3.2 captures and on the
// package's own output of every allocation class: read once a call, its
// freshness noted.
func TestVdevList(t *testing.T) {
	for _, c := range []struct {
		name   string
		client func(t *testing.T) (*Client, *countingRunner)
		rows   int
	}{
		{"own", func(t *testing.T) (*Client, *countingRunner) {
			fixture := sample.MustRead(t, "zpool/testdata/list-v-Hp-classes.txt")
			run := &countingRunner{Runner: answers{listHp: string(fixture.Body)}, lines: map[string]int{}}
			return New(Config{Runner: run, Now: func() time.Time { return testNow }}, slog.New(slog.DiscardHandler)), run
		}, 15},
		{"openzfs-2.3", func(t *testing.T) (*Client, *countingRunner) {
			return replayClient(t, sample.Dir(t, "captures/openzfs-2.3"), "04-scrubbed-healthy")
		}, 21},
	} {
		t.Run(c.name, func(t *testing.T) {
			client, run := c.client(t)
			for i := range 2 {
				rows, err := client.VdevList(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				if len(rows) != c.rows {
					t.Errorf("%d rows, want %d", len(rows), c.rows)
				}
				if n := run.runs(listHp); n != i+1 {
					t.Errorf("%s ran %d times in %d calls", listHp, n, i+1)
				}
			}
			if st := client.Freshness()[SourceVdevList]; !st.Up || !st.LastSuccess.Equal(testNow) {
				t.Errorf("freshness of %s: %+v", SourceVdevList, st)
			}
		})
	}
}

// A zpool that refuses -p (illumos before 2013) is asked with -H, one that
// refuses -H too with the table, and the form that works is kept; one that
// refuses -v in every form (zfs-fuse, "invalid option 'v'") is not asked
// again.
func TestVdevListFallsBack(t *testing.T) {
	const table = "NAME         SIZE  ALLOC   FREE  EXPANDSZ    CAP  DEDUP  HEALTH  ALTROOT\n" +
		"house       2.72T  1.55T  1.17T         -    57%  1.00x  ONLINE  -\n" +
		"  mirror    2.72T  1.55T  1.17T         -\n" +
		"    c4t3d0      -      -      -         -\n" +
		"    c4t5d0      -      -      -         -\n"
	scripted := "house\t2.72T\t1.55T\t1.17T\t-\t57%\t1.00x\tONLINE\t-\n\tmirror\t2.72T\t1.55T\t1.17T\t-\n\tc4t3d0\t-\t-\t-\t-\n\tc4t5d0\t-\t-\t-\t-\n"
	refused := "exit 2: invalid option 'p'"
	tests := []struct {
		name    string
		answers answers
		runs    map[string]int // over three calls
		rows    int
	}{
		{"-p refused", answers{listHp: refused, listH: scripted}, map[string]int{listHp: 1, listH: 3}, 4},
		{"-H refused", answers{listHp: "exit 2: invalid option 'H'", listH: "exit 2: invalid option 'H'", listTable: table}, map[string]int{listHp: 1, listH: 1, listTable: 3}, 4},
		{"-v refused", answers{listHp: "exit 2: invalid option 'v'", listH: "exit 2: invalid option 'v'", listTable: "exit 2: invalid option 'v'"}, map[string]int{listHp: 1, listH: 1, listTable: 1}, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			run := &countingRunner{Runner: tc.answers, lines: map[string]int{}}
			client := New(Config{Runner: run}, slog.New(slog.DiscardHandler))
			for range 3 {
				rows, err := client.VdevList(context.Background())
				switch {
				case tc.rows == 0 && !errors.Is(err, ErrNoVdevList):
					t.Fatalf("err %v, want ErrNoVdevList", err)
				case tc.rows > 0 && (err != nil || len(rows) != tc.rows):
					t.Fatalf("%d rows, %v; want %d", len(rows), err, tc.rows)
				}
			}
			for line, want := range tc.runs {
				if n := run.runs(line); n != want {
					t.Errorf("%s ran %d times, want %d", line, n, want)
				}
			}
		})
	}
}

// A replay that holds no capture of any form refuses them all, once.
func TestVdevListNotInReplay(t *testing.T) {
	client, run := replayClient(t, "../../collector/testdata/replay/zfs-fuse/000")
	for range 2 {
		if _, err := client.VdevList(context.Background()); !errors.Is(err, ErrNoVdevList) {
			t.Fatalf("err %v, want ErrNoVdevList", err)
		}
	}
	if n := run.runs(listHp) + run.runs(listH) + run.runs(listTable); n != 3 {
		t.Errorf("zpool list -v ran %d times, want each form once", n)
	}
}

// A failure that is no refusal (zpool stuck, a pool gone) is not
// remembered, and output that cannot be read names its command and line:
// each costs its own call, and the freshness says so.
func TestVdevListFailures(t *testing.T) {
	run := &countingRunner{Runner: answers{listHp: "exit 2: internal error: out of memory"}, lines: map[string]int{}}
	client := New(Config{Runner: run}, slog.New(slog.DiscardHandler))
	for range 2 {
		if _, err := client.VdevList(context.Background()); err == nil || errors.Is(err, ErrNoVdevList) {
			t.Fatalf("err %v, want the failure", err)
		}
	}
	if n := run.runs(listHp); n != 2 {
		t.Errorf("%s ran %d times, want 2: a failure is not a refusal", listHp, n)
	}
	if st := client.Freshness()[SourceVdevList]; st.Up {
		t.Errorf("freshness of %s up after a failure", SourceVdevList)
	}

	client = New(Config{Runner: answers{listHp: "tank\t1000\n"}}, slog.New(slog.DiscardHandler))
	_, err := client.VdevList(context.Background())
	var pe *parse.Error
	if !errors.Is(err, parse.ErrUnexpected) || !errors.As(err, &pe) || pe.Source != listHp || pe.Line != 1 || !strings.HasPrefix(err.Error(), listHp+": line 1: ") {
		t.Errorf("err %v, want a parse error naming the command and the line", err)
	}
}
