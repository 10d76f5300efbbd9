package hostgen

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/zpool-exporter/zpool_exporter/internal/runner"
)

// ErrNoAnswer means the host holds no output for a command line.
var ErrNoAnswer = errors.New("no output of this command on the host")

// Answer returns what zpool prints for args on the host in dir (written
// by Write or WriteCaptures): the capture of the command line, or of the
// same line without "--" (as the replay answers it), or for a scripted
// `zpool get` of some properties the rows of the capture of all of them.
// `zpool list -H -o
// name` and `zpool get -H[p] -o COLUMNS PROPERTIES [POOL...]`, which
// pdf/zfs_exporter runs, are answered from the capture of `zpool get -Hp
// all`, as zpool would print them.
func Answer(dir string, args []string) ([]byte, error) {
	line := "zpool " + strings.Join(args, " ")
	if out, err := readAnswer(dir, line); !errors.Is(err, fs.ErrNotExist) {
		return out, err
	}
	if runner.IsEventsLine(line) {
		if out, err := readAnswer(dir, eventsLine); !errors.Is(err, fs.ErrNotExist) {
			return out, err
		}
	}
	if all, properties, ok := runner.GetAllLine(line); ok {
		if out, err := readAnswer(dir, all); !errors.Is(err, fs.ErrNotExist) {
			return runner.KeepProperties(out, properties), err
		}
	}
	q, ok := parseQuery(args)
	if !ok {
		return nil, fmt.Errorf("%s: %w", line, ErrNoAnswer)
	}
	all, err := os.ReadFile(filepath.Join(dir, runner.CaptureFileName("zpool get -Hp all")))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", line, err)
	}
	return q.answer(all), nil
}

// readAnswer reads the capture of line, or of line without its "--".
func readAnswer(dir, line string) ([]byte, error) {
	var err error
	for _, l := range []string{line, strings.Replace(line, " -- ", " ", 1)} {
		var out []byte
		if out, err = os.ReadFile(filepath.Join(dir, runner.CaptureFileName(l))); !errors.Is(err, fs.ErrNotExist) {
			return out, err
		}
	}
	return nil, err
}

// query is a `zpool list` or `zpool get` of pool properties in scripted
// form (-H): its columns, properties and pools.
type query struct {
	columns    []string // of get: name, property, value, source; of list: properties
	properties []string // of get
	pools      []string // none: every pool
}

// parseQuery reads the `zpool list -H -o ...` and `zpool get -H -o ...
// PROPERTIES ...` lines that the stand-in answers; -p is taken and
// ignored, since the capture read is exact already.
func parseQuery(args []string) (query, bool) {
	if len(args) == 0 || args[0] != "list" && args[0] != "get" {
		return query{}, false
	}
	var q query
	scripted := false
	rest := args[1:]
	for len(rest) > 0 && strings.HasPrefix(rest[0], "-") && rest[0] != "--" {
		flags := rest[0][1:]
		rest = rest[1:]
		for i := 0; i < len(flags); i++ {
			switch flags[i] {
			case 'H':
				scripted = true
			case 'p':
			case 'o':
				value := flags[i+1:]
				if value == "" && len(rest) > 0 {
					value, rest = rest[0], rest[1:]
				}
				q.columns = strings.Split(value, ",")
				i = len(flags)
			default:
				return query{}, false
			}
		}
	}
	if len(rest) > 0 && rest[0] == "--" {
		rest = rest[1:]
	}
	if !scripted || len(q.columns) == 0 {
		return query{}, false
	}
	if args[0] == "get" {
		if len(rest) == 0 {
			return query{}, false
		}
		q.properties, rest = strings.Split(rest[0], ","), rest[1:]
	} else if !slices.Equal(q.columns, []string{"name"}) {
		return query{}, false
	}
	q.pools = rest
	return q, true
}

// answer prints the query from the rows of `zpool get -Hp all`: pools in
// the order asked (or zpool's), each property in the order asked.
func (q query) answer(all []byte) []byte {
	type row struct{ name, property, value, source string }
	byPool := map[string]map[string]row{}
	var order []string
	for line := range bytes.Lines(all) {
		f := strings.Split(strings.TrimSuffix(string(line), "\n"), "\t")
		if len(f) != 4 {
			continue
		}
		if byPool[f[0]] == nil {
			byPool[f[0]] = map[string]row{}
			order = append(order, f[0])
		}
		byPool[f[0]][f[1]] = row{f[0], f[1], f[2], f[3]}
	}
	pools := q.pools
	if len(pools) == 0 {
		pools = order
	}
	var b bytes.Buffer
	w := bufio.NewWriter(&b)
	for _, p := range pools {
		if q.properties == nil { // list -o name
			w.WriteString(p + "\n")
			continue
		}
		for _, prop := range q.properties {
			r, ok := byPool[p][prop]
			if !ok {
				continue
			}
			for i, c := range q.columns {
				if i > 0 {
					w.WriteByte('\t')
				}
				switch c {
				case "name":
					w.WriteString(r.name)
				case "property":
					w.WriteString(r.property)
				case "value":
					w.WriteString(r.value)
				case "source":
					w.WriteString(r.source)
				}
			}
			w.WriteByte('\n')
		}
	}
	w.Flush()
	return b.Bytes()
}
