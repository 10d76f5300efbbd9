// Package zpooltest reads the project's zpool status fixtures for the
// tests of the packages that take a parsed status.
package zpooltest

import (
	"bytes"
	"testing"
	"time"

	"github.com/zpool-exporter/zpool_exporter/internal/testkit/sample"
	"github.com/zpool-exporter/zpool_exporter/internal/zfs/zpool"
)

// ParseStatus parses a status fixture, headed by its command: JSON when
// that command has -j, text read in UTC otherwise. The fixture must parse.
func ParseStatus(t testing.TB, fixture string) (st *zpool.Status, json bool) {
	t.Helper()
	f := sample.MustRead(t, fixture)
	var err error
	if json = bytes.Contains([]byte(f.Header["command"]), []byte(" -j")); json {
		st, err = zpool.ParseStatusJSON(bytes.NewReader(f.Body))
	} else {
		st, err = zpool.ParseStatus(bytes.NewReader(f.Body), time.UTC)
	}
	if err != nil {
		t.Fatalf("%s: %v", fixture, err)
	}
	return st, json
}
