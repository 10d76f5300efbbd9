package hostgen

import (
	"bufio"
	"fmt"
	"strings"
)

// writeStatusText writes `zpool status`, or `zpool status -s -p` with
// slow, as OpenZFS 2.3.2 and 2.4.4 print a healthy pool never scrubbed.
// Without errors, -p changes nothing, so `zpool status -p` is the plain
// output. With ops (-t -i), each disk is noted never initialized nor
// trimmed.
func writeStatusText(w *bufio.Writer, h host, slow, ops bool) {
	for i, p := range h.pools {
		if i > 0 {
			w.WriteByte('\n')
		}
		fmt.Fprintf(w, "  pool: %s\n state: ONLINE\nconfig:\n\n", p.name)
		// zpool pads the names to the widest, indent included, and two.
		width := len(p.name)
		for _, m := range p.mirrors {
			width = max(width, 2+len(m.name), 4+len(m.leaves[0].name), 4+len(m.leaves[1].name))
		}
		width += 2
		header := fmt.Sprintf("\t%-*s%-8s %5s %5s %5s", width, "NAME", "STATE", "READ", "WRITE", "CKSUM")
		if slow {
			header += fmt.Sprintf(" %5s", "SLOW")
		}
		w.WriteString(header + "\n")
		row := func(depth int, name string, leaf bool) {
			fmt.Fprintf(w, "\t%-*s%-8s %5d %5d %5d", width, strings.Repeat(" ", depth)+name, "ONLINE", 0, 0, 0)
			if slow {
				fmt.Fprintf(w, " %5d", 0)
			}
			if ops && leaf {
				w.WriteString("  (uninitialized)  (untrimmed)")
			}
			w.WriteByte('\n')
		}
		row(0, p.name, false)
		for _, m := range p.mirrors {
			row(2, m.name, false)
			for _, l := range m.leaves {
				row(4, l.name, true)
			}
		}
		w.WriteString("\nerrors: No known data errors\n")
	}
}
