package hostgen

import (
	"bufio"
	"fmt"
)

// writeStatusJSON writes `zpool status -j --json-int` as OpenZFS 2.3.2 and
// 2.4.4 print it, on one line: the objects and their keys are r10's of
// the guest's 01-created scenario, in their order. With ops (-t -i), each
// disk has its initialization and TRIM states, never run.
func writeStatusJSON(w *bufio.Writer, h host, ops bool) {
	w.WriteString(`{"output_version":{"command":"zpool status","vers_major":0,"vers_minor":1},"pools":{`)
	for i, p := range h.pools {
		if i > 0 {
			w.WriteByte(',')
		}
		size, allocated := poolSpace(p)
		fmt.Fprintf(w, `%q:{"name":%q,"state":"ONLINE","pool_guid":%d,"txg":4,"spa_version":5000,"zpl_version":5,"vdevs":{`, p.name, p.name, p.guid)
		fmt.Fprintf(w, `%q:{"name":%q,"vdev_type":"root","guid":%d,"class":"normal","state":"ONLINE","alloc_space":%d,"total_space":%d,"def_space":%d,"read_errors":0,"write_errors":0,"checksum_errors":0,"vdevs":{`,
			p.name, p.name, p.guid, allocated, size, size)
		for j, m := range p.mirrors {
			if j > 0 {
				w.WriteByte(',')
			}
			fmt.Fprintf(w, `%q:{"name":%q,"vdev_type":"mirror","guid":%d,"class":"normal","state":"ONLINE","alloc_space":%d,"total_space":%d,"def_space":%d,"rep_dev_size":%d,"read_errors":0,"write_errors":0,"checksum_errors":0,"vdevs":{`,
				m.name, m.name, m.guid, mirrorAllocated, mirrorSize, mirrorSize, mirrorSize)
			for k, l := range m.leaves {
				if k > 0 {
					w.WriteByte(',')
				}
				fmt.Fprintf(w, `%q:{"name":%q,"vdev_type":"disk","guid":%d,"path":%q,"class":"normal","state":"ONLINE","rep_dev_size":1011351552,"phys_space":1063256064,"read_errors":0,"write_errors":0,"checksum_errors":0,"slow_ios":0`,
					l.name, l.name, l.guid, l.path())
				if ops {
					w.WriteString(`,"init_state":"UNINITIALIZED","trim_state":"UNTRIMMED","trim_notsup":0`)
				}
				w.WriteByte('}')
			}
			w.WriteString(`}}`)
		}
		w.WriteString(`}}},"error_count":0}`)
	}
	w.WriteString("}}\n")
}
