package main

import (
	"strings"
	"testing"
	"time"
)

// What kingpin v2.4's --help-man writes when the version is
// version.Print's several lines.
const kingpinPage = `.TH zpool_bench 1 zpool_bench, version v1.2.3 (branch: main, revision: abc)
  build user:       me@host
  go version:       go1.26.8
.SH "NAME"
zpool_bench
.SH "SYNOPSIS"
.TP
\fBzpool_bench [<flags>] <command> [<args> ...]\fR
`

func TestManPage(t *testing.T) {
	got, err := manPage([]byte(kingpinPage), "zpool_bench", "run a benchmark", "1.2.3", time.Date(2025, 12, 2, 0, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	want := `.TH "ZPOOL_BENCH" 1 2025-12-02 "zpool_bench 1.2.3" "User Commands"
.SH "NAME"
zpool_bench \- run a benchmark
.SH "SYNOPSIS"
.TP
\fBzpool_bench [<flags>] <command> [<args> ...]\fR
`
	if string(got) != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
}

func TestManPageRefusesOtherText(t *testing.T) {
	for name, page := range map[string]string{
		"no .TH":       strings.TrimPrefix(kingpinPage, ".TH"),
		"no NAME":      strings.Replace(kingpinPage, `.SH "NAME"`, `.SH "NAMES"`, 1),
		"another name": strings.Replace(kingpinPage, "\nzpool_bench\n", "\nzpool_exporter\n", 1),
	} {
		if _, err := manPage([]byte(page), "zpool_bench", "x", "1", time.Time{}); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}
