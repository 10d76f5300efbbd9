package main

import (
	"flag"
	"os"
	"strings"
	"testing"
)

var updateDocs = flag.Bool("update-docs", false, "rewrite docs/flags.md's --help block from the binary")

// docs/flags.md gives --help as the binary prints it: generated, never
// copied by hand (go test -run TestFlagsDocIsHelp -update-docs rewrites it).
func TestFlagsDocIsHelp(t *testing.T) {
	const path = "../../docs/flags.md"
	help, _, code := runBinary(t, "--help")
	if code != 0 {
		t.Fatalf("--help: exit %d", code)
	}
	help = strings.TrimRight(help, "\n") + "\n"
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	const open = "```\nusage: zpool_exporter"
	start := strings.Index(doc, open)
	if start < 0 {
		t.Fatalf("%s has no block beginning %q", path, open)
	}
	start += len("```\n")
	end := strings.Index(doc[start:], "```\n")
	if end < 0 {
		t.Fatalf("%s: the --help block does not end", path)
	}
	end += start
	if doc[start:end] == help {
		return
	}
	if *updateDocs {
		if err := os.WriteFile(path, []byte(doc[:start]+help+doc[end:]), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Errorf("%s's --help block is not what the binary prints; run go test -run TestFlagsDocIsHelp ./cmd/zpool_exporter -update-docs", path)
}
