package zfs

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/zpool-exporter/zpool_exporter/internal/parse"
	"github.com/zpool-exporter/zpool_exporter/internal/runner"
)

// zfs-fuse takes no `zfs list -p` and knows six of the properties asked
// for: the first listing learns that, one refusal a run, as recorded on a
// real zfs-fuse, and reads its filesystems through zfs get; the next asks
// once.
func TestDatasetsLearnWhatZFSFuseTakes(t *testing.T) {
	client, run := replayClient(t, "dataset/testdata/zfs-fuse")
	ctx := context.Background()
	l, err := client.Datasets(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, d := range l.Datasets {
		names = append(names, d.Name)
	}
	want := []string{"cds", "cds/clone", "cds/gzip", "cds/nested", "cds/nested/child", "cds/plain", "cds/quota", "cds/reserved"}
	if !slices.Equal(names, want) {
		t.Errorf("datasets %v, want the filesystems %v without snapshots", names, want)
	}
	for _, p := range []string{"logicalused", "logicalreferenced", "written", "encryption", "keystatus", "sync"} {
		if l.Column(p) >= 0 {
			t.Errorf("asked zfs-fuse for %s", p)
		}
	}
	quota := l.Datasets[slices.Index(names, "cds/quota")]
	if got := quota.Value(l.Column("quota")); got != "67108864" {
		t.Errorf("cds/quota's quota %q, want 64 MiB", got)
	}
	runs := 0
	for line := range run.lines {
		if strings.HasPrefix(line, "zfs ") {
			runs += run.runs(line)
		}
	}
	if runs != 8 {
		t.Errorf("%d zfs runs to learn, want 8: list -p, then get refused for each of six properties, then answered", runs)
	}
	if _, err := client.Datasets(ctx); err != nil {
		t.Fatal(err)
	}
	last := "zfs get -Hp -o name,property,value type,used,available,referenced,usedbydataset,usedbychildren,usedbysnapshots,usedbyrefreservation,quota,refquota,reservation,refreservation,volsize,compressratio,mounted,canmount,compression,recordsize,volblocksize,atime,dedup,primarycache,origin,mountpoint"
	if n := run.runs(last); n != 2 {
		t.Errorf("%q ran %d times, want once a listing", last, n)
	}
	if st := client.Freshness()[SourceDatasets]; !st.Up || st.LastSuccess.IsZero() {
		t.Errorf("freshness of %s: %+v", SourceDatasets, st)
	}
}

// A zfs that cannot be run (none installed, or a replay without zfs) is an
// error, not a listing of nothing.
func TestDatasetsWithoutZFS(t *testing.T) {
	client, _ := replayClient(t, "../../collector/testdata/replay/zfs-fuse/000")
	if _, err := client.Datasets(context.Background()); err == nil {
		t.Error("no error without zfs")
	}
	if st := client.Freshness()[SourceDatasets]; st.Up {
		t.Errorf("freshness of %s up without zfs", SourceDatasets)
	}
}

// zfs-fuse refuses `zfs list -p` for snapshots too: the first listing
// learns that and reads them from zfs get, which prints every dataset
// beside the snapshots; the next asks zfs get at once.
func TestSnapshotsLearnWhatZFSFuseTakes(t *testing.T) {
	client, run := replayClient(t, "dataset/testdata/zfs-fuse")
	ctx := context.Background()
	for range 2 {
		l, err := client.Snapshots(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, d := range l.Datasets {
			names = append(names, d.Name)
		}
		want := []string{"cds/nested@all", "cds/nested/child@all", "cds/plain@first", "cds/plain@second"}
		if !slices.Equal(names, want) {
			t.Errorf("snapshots %v, want %v", names, want)
		}
		if got := l.Datasets[2].Value(l.Column("creation")); got != "1796218584" {
			t.Errorf("creation of cds/plain@first %q", got)
		}
	}
	if n := run.runs("zfs list -Hp -t snapshot -o name,creation,used,referenced"); n != 1 {
		t.Errorf("zfs list -p tried %d times, want once", n)
	}
	if n := run.runs("zfs get -Hp -o name,property,value creation,used,referenced"); n != 2 {
		t.Errorf("zfs get ran %d times, want once a listing", n)
	}
	if st := client.Freshness()[SourceSnapshots]; !st.Up || st.LastSuccess.IsZero() {
		t.Errorf("freshness of %s: %+v", SourceSnapshots, st)
	}
}

// answers is a zfs that prints a fixed output for each command line, or
// fails with the message after "exit 2: ".
type answers map[string]string

func (a answers) Run(_ context.Context, cmd runner.Command) ([]byte, error) {
	line := cmd.Path + " " + strings.Join(cmd.Args, " ")
	out, ok := a[line]
	if !ok {
		return nil, fmt.Errorf("%s: exit status 2: unexpected command line", line)
	}
	if msg, refused := strings.CutPrefix(out, "exit 2: "); refused {
		return nil, fmt.Errorf("%s: exit status 2: %s", line, msg)
	}
	return []byte(out), nil
}

// Text that this exporter cannot read is not the end of the listing:
// JSON, where zfs prints it, is asked for from then on.
func TestDatasetsFallBackToJSONFromUnreadableText(t *testing.T) {
	props := strings.Join(DatasetProperties, ",")
	text := "zfs list -Hp -t filesystem,volume -o " + props
	list := "zfs list -j --json-int -t filesystem,volume -o " + props
	broken := "tank\tfilesystem\n"
	json := `{"output_version": {"command": "zfs list", "vers_major": 0, "vers_minor": 1}, "datasets": {"tank": {"name": "tank",
		"properties": {"type": {"value": "filesystem"}, "used": {"value": 1024}, "mountpoint": {"value": "/tank/two\nlines"}}}}}`
	run := &countingRunner{Runner: answers{text: broken, list: json}, lines: map[string]int{}}
	client := New(Config{Runner: run}, slog.New(slog.DiscardHandler))
	for range 2 {
		l, err := client.Datasets(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if len(l.Datasets) != 1 || l.Datasets[0].Value(l.Column("mountpoint")) != "/tank/two\nlines" || l.Datasets[0].Value(l.Column("used")) != "1024" {
			t.Fatalf("datasets %+v, want tank mounted at a path of two lines", l.Datasets)
		}
	}
	if n := run.runs(text); n != 1 {
		t.Errorf("zfs list -Hp ran %d times, want once", n)
	}
	if n := run.runs(list); n != 2 {
		t.Errorf("zfs list -j ran %d times, want once a listing", n)
	}
}

// Before OpenZFS 2.3 there is no JSON to turn to: the text's error stands,
// and the next listing asks for text alone.
func TestDatasetsUnreadableTextWithoutJSON(t *testing.T) {
	props := strings.Join(DatasetProperties, ",")
	text := "zfs list -Hp -t filesystem,volume -o " + props
	broken := "tank\tfilesystem\n"
	refused := answers{text: broken, "zfs list -j --json-int -t filesystem,volume -o " + props: "exit 2: invalid option 'j'"}
	run := &countingRunner{Runner: refused, lines: map[string]int{}}
	client := New(Config{Runner: run}, slog.New(slog.DiscardHandler))
	for range 2 {
		if _, err := client.Datasets(context.Background()); !errors.Is(err, parse.ErrUnexpected) {
			t.Errorf("err %v, want the text's parse error", err)
		}
	}
	if n := run.runs("zfs list -j --json-int -t filesystem,volume -o " + props); n != 1 {
		t.Errorf("zfs list -j tried %d times, want once", n)
	}
}

// A mountpoint that holds a newline goes on over two lines of text, which
// read as one dataset: OpenZFS before 2.3 has no JSON to ask for, and the
// listing lost every dataset over one mountpoint.
func TestDatasetsMountpointOverTwoLinesInText(t *testing.T) {
	props := strings.Join(DatasetProperties, ",")
	text := "zfs list -Hp -t filesystem,volume -o " + props
	values := strings.Repeat("\t-", len(DatasetProperties)-3)
	out := "tank\tfilesystem" + values + "\t/tank\ntank/odd\tfilesystem" + values + "\t/tank/two\nlines\ntank/next\tvolume" + values + "\t-\n"
	run := &countingRunner{Runner: answers{text: out}, lines: map[string]int{}}
	client := New(Config{Runner: run}, slog.New(slog.DiscardHandler))
	l, err := client.Datasets(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, d := range l.Datasets {
		got = append(got, d.Name+" at "+d.Value(l.Column("mountpoint")))
	}
	if want := []string{"tank at /tank", "tank/odd at /tank/two\nlines", "tank/next at -"}; !slices.Equal(got, want) {
		t.Errorf("datasets %q, want %q", got, want)
	}
	if n := run.runs("zfs list -j --json-int -t filesystem,volume -o " + props); n != 0 {
		t.Errorf("zfs list -j asked %d times for text that reads", n)
	}
}
