package dataset

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSummarizeSnapshots(t *testing.T) {
	in := "tank/a@1\t1700000300\t4096\n" +
		"tank/a@2\t1700000100\t0\n" +
		"tank/a@3\t1700000200\t8192\n" +
		"tank/b@only\t-\t512\n" + // creation unreadable: counted, no times
		"tank/c\t1700000000\t1\n" + // not a snapshot
		"tank/a/child@1\t1700000400\t2\n"
	l, err := ParseList(strings.NewReader(in), []string{"name", "creation", "used"})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]Snapshots{
		"tank/a":       {Count: 3, Oldest: 1700000100, Newest: 1700000300, Used: 12288},
		"tank/b":       {Count: 1, Used: 512},
		"tank/a/child": {Count: 1, Oldest: 1700000400, Newest: 1700000400, Used: 2},
	}
	if diff := cmp.Diff(want, SummarizeSnapshots(l)); diff != "" {
		t.Errorf("summary (-want +got):\n%s", diff)
	}
}
