// Command genhost writes a large ZFS host that does not exist as a replay
// directory, for benchmarks of the exporter at scale:
//
//	go run ./internal/testkit/hostgen/cmd/genhost -pools 1 -leaves 1000 /tmp/host
//	zpool_exporter --zpool.replay-dir=/tmp/host
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/zpool-exporter/zpool_exporter/internal/testkit/hostgen"
)

func main() {
	var s hostgen.Spec
	flag.IntVar(&s.Pools, "pools", 1, "pools, each a stripe of 2-way mirrors")
	flag.IntVar(&s.Leaves, "leaves", 1000, "leaves (disks) per pool, an even number")
	flag.StringVar(&s.Version, "openzfs", "2.3", "the OpenZFS release whose outputs are written: 2.3 or 2.4")
	flag.Usage = func() {
		fmt.Fprintln(flag.CommandLine.Output(), "usage: genhost [flags] DIR\n\nWrites the outputs of a host of POOLS pools of LEAVES leaves into DIR, which must not exist.")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() != 1 {
		flag.Usage()
		os.Exit(2)
	}
	if err := hostgen.Write(flag.Arg(0), s); err != nil {
		fmt.Fprintln(os.Stderr, "genhost:", err)
		os.Exit(1)
	}
}
