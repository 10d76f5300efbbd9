package runner

import (
	"bytes"
	"slices"
	"strings"
)

// GetAllLine returns, for a scripted `zpool get` of a list of properties
// ("zpool get -Hp -- read_ops,write_ops tank all-vdevs"), the same line
// asking for all of them, and the properties listed. A replay answers the
// first from a capture of the second, as zpool would: captures record
// `all`, and the exporter asks only for what it reads.
func GetAllLine(line string) (all string, properties []string, ok bool) {
	args := strings.Split(line, " ")
	if len(args) < 4 || args[1] != "get" {
		return "", nil, false
	}
	i, scripted := 2, false
	for ; i < len(args) && strings.HasPrefix(args[i], "-") && args[i] != "--"; i++ {
		if strings.Trim(args[i], "-Hp") != "" { // -o picks columns: not derived
			return "", nil, false
		}
		scripted = scripted || strings.Contains(args[i], "H")
	}
	if i < len(args) && args[i] == "--" {
		i++
	}
	if !scripted || i >= len(args)-1 || args[i] == "all" {
		return "", nil, false
	}
	properties = strings.Split(args[i], ",")
	args = slices.Clone(args)
	args[i] = "all"
	return strings.Join(args, " "), properties, true
}

// KeepProperties returns the rows of scripted `zpool get` output (name,
// property, value and source, tab-separated) whose property is one of
// properties, each object's in the order of properties, as zpool prints a
// list of properties.
func KeepProperties(out []byte, properties []string) []byte {
	var (
		kept    bytes.Buffer
		name    []byte
		current = make([][]byte, len(properties)) // the object's rows, by property
	)
	flush := func() {
		for i, row := range current {
			kept.Write(row)
			current[i] = nil
		}
	}
	for row := range bytes.Lines(out) {
		objEnd := bytes.IndexByte(row, '\t')
		if objEnd < 0 {
			continue
		}
		propEnd := bytes.IndexByte(row[objEnd+1:], '\t')
		if propEnd < 0 {
			continue
		}
		if !bytes.Equal(row[:objEnd], name) {
			flush()
			name = row[:objEnd]
		}
		i := slices.Index(properties, string(row[objEnd+1:objEnd+1+propEnd]))
		if i < 0 {
			continue
		}
		if !bytes.HasSuffix(row, []byte("\n")) {
			row = append(slices.Clip(row), '\n')
		}
		current[i] = row
	}
	flush()
	return kept.Bytes()
}
