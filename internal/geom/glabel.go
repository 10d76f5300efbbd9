// Package geom parses what FreeBSD's GEOM tools print about the providers
// under the names zpool shows for a leaf vdev: GPT labels (gpt/zfs0), GPT
// partition IDs (gptid/UUID) and disk IDs (diskid/DISK-SERIAL) are labels
// on a provider such as ada0p3, whose disk iostat reports.
//
// The parser is pure: it reads an io.Reader and returns typed values, with
// no exec, no files and no metrics. Output it cannot read gives a parse
// error (package parse) naming its line.
package geom

import (
	"bufio"
	"io"
	"strings"

	"github.com/zpool-exporter/zpool_exporter/internal/parse"
)

// ParseGlabelStatus reads `glabel status` or `glabel status -s` and returns
// the provider under each label: "gpt/zfs0" -> "ada0p3". Both print one
// label per line: its name, its status (N/A for a working label) and the
// provider it sits on; without -s a header line comes first.
func ParseGlabelStatus(r io.Reader) (map[string]string, error) {
	labels := map[string]string{}
	sc := bufio.NewScanner(r)
	for lineNo := 1; sc.Scan(); lineNo++ {
		fields := strings.Fields(sc.Text())
		switch {
		case len(fields) == 0:
			continue
		case lineNo == 1 && len(fields) == 3 && fields[0] == "Name" && fields[2] == "Components":
			continue
		case len(fields) != 3:
			return nil, parse.Errorf(lineNo, "want a label, its status and its provider, got %q", sc.Text())
		}
		name, provider := fields[0], fields[2]
		if prev, ok := labels[name]; ok && prev != provider {
			return nil, parse.Errorf(lineNo, "label %s is on both %s and %s", name, prev, provider)
		}
		labels[name] = provider
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return labels, nil
}
