package hostgen

import (
	"bufio"
	"fmt"
	"hash/fnv"
	"path/filepath"
	"strings"
	"time"

	"github.com/zpool-exporter/zpool_exporter/internal/runner"
)

// EventsQueueLen is how many events a host's queue holds: OpenZFS's
// default zfs_zevent_len_max, which a host that has run for a while
// fills.
const EventsQueueLen = 512

// eventsLine is the command line whose answer holds a host's events, and
// answers every other `zpool events` line (as in a replay).
const eventsLine = "zpool events -vH"

// WriteEvents adds to a host the kernel's queue of events as `zpool
// events -vH` prints it, for the pools named: each pool's creation (the
// pool_create event and a config_sync, as OpenZFS 2.4 posts them), then
// snapshots taken in each pool in turn, history events, until the queue
// holds EventsQueueLen events. Their payloads are those of the OpenZFS
// 2.4.4 guest's, pair for pair.
func WriteEvents(dir string, pools []string) error {
	return writeWith(filepath.Join(dir, runner.CaptureFileName(eventsLine)), func(w *bufio.Writer) {
		writeEvents(w, pools, time.Date(2026, 12, 8, 0, 0, 0, 0, time.UTC))
	})
}

func writeEvents(w *bufio.Writer, pools []string, start time.Time) {
	eid := 0
	post := func(class, pool string, pairs ...string) {
		eid++
		at := start.Add(time.Duration(eid) * time.Second)
		fmt.Fprintf(w, "%s\t%s\n", at.Format("Jan _2 2006 15:04:05.000000000"), class)
		fmt.Fprintf(w, "        version = 0x0\n        class = %q\n        pool = %q\n        pool_guid = 0x%x\n", class, pool, poolGUIDOf(pool))
		for _, p := range pairs {
			w.WriteString("        " + p + "\n")
		}
		fmt.Fprintf(w, "        time = 0x%x 0x%x \n        eid = 0x%x\n\n", at.Unix(), at.Nanosecond(), eid)
	}
	for _, p := range pools {
		post("sysevent.fs.zfs.pool_create", p, "pool_state = 0x0", "pool_context = 0x6")
		post("sysevent.fs.zfs.config_sync", p, "pool_state = 0x0", "pool_context = 0x6")
	}
	for i := 0; eid < EventsQueueLen && len(pools) > 0; i++ {
		p := pools[i%len(pools)]
		at := start.Add(time.Duration(eid+1) * time.Second)
		post("sysevent.fs.zfs.history_event", p, "pool_state = 0x0", "pool_context = 0x0",
			`history_hostname = "nas"`,
			fmt.Sprintf("history_dsname = %q", fmt.Sprintf("%s@auto-%d", p, i/len(pools))),
			`history_internal_str = " "`, `history_internal_name = "snapshot"`,
			fmt.Sprintf("history_dsid = 0x%x", 0x100+i), fmt.Sprintf("history_txg = 0x%x", 0x40+i),
			fmt.Sprintf("history_time = 0x%x", at.Unix()))
	}
}

// poolGUIDOf is a pool's GUID in a host's events, made from its name as
// the generated pools' are.
func poolGUIDOf(pool string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(pool))
	return h.Sum64()
}

// Follows tells whether a zpool command line follows a stream that does
// not end (`zpool events -f`), as a stand-in must not end either.
func Follows(args []string) bool {
	if len(args) == 0 || args[0] != "events" {
		return false
	}
	for _, a := range args[1:] {
		if strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") && strings.ContainsRune(a, 'f') {
			return true
		}
	}
	return false
}
