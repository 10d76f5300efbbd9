// Package demo holds what `zpool_exporter --demo` serves: the outputs of
// every zpool command the exporter runs, captured from a real zfs-fuse
// pool while one of its disks fails and is replaced, one numbered step per
// moment, embedded in the binary so that the exporter can be tried on a
// machine without ZFS. deploy/demo/README.md tells the story step by step,
// and deploy/demo/capture.sh records it again.
package demo

import (
	"embed"
	"io/fs"
	"time"
)

//go:embed replay
var captures embed.FS

// Dir is where the captures are kept in the source tree, which is how the
// replay's messages name them.
const Dir = "internal/demo/replay"

// Story is what the demo shows, in a sentence for the exporter's log.
const Story = "tank, a raidz1 of three file vdevs on zfs-fuse, loses disk2 under writes and resilvers onto disk4"

// The pace the captures are made for: a step every StepEvery, about the
// time a dashboard needs to show a change, and `zpool iostat -v 1` streams,
// sampled every IostatInterval.
const (
	StepEvery      = 20 * time.Second
	IostatInterval = time.Second
)

// Replay returns the captures laid out as a replay directory: a numbered
// subdirectory per step (see internal/runner/REPLAY.md).
func Replay() fs.FS {
	sub, err := fs.Sub(captures, "replay")
	if err != nil {
		panic(err) // only for an invalid path, which "replay" is not
	}
	return sub
}
