package iostat

import (
	"bytes"
	"fmt"
	"testing"
)

// sixtyDisks is an illumos `iostat -xn` report of a 60-disk JBOD.
func sixtyDisks() []byte {
	var b bytes.Buffer
	b.WriteString("                    extended device statistics              \n")
	b.WriteString("    r/s    w/s   kr/s   kw/s wait actv wsvc_t asvc_t  %w  %b device\n")
	for i := range 60 {
		fmt.Fprintf(&b, " %6.1f %6.1f %6.1f %6.1f %4.1f %4.1f %6.1f %6.1f %3.0f %3.0f c0t5000CCA25%07Xd0\n",
			120.5+float64(i), 35.0, 15360.0, 4480.0, 0.0, 1.2, 0.0, 7.6, 0.0, 64.0, i)
	}
	return b.Bytes()
}

func BenchmarkParseIostat60Disks(b *testing.B) {
	data := sixtyDisks()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		r, err := ParseIostat(bytes.NewReader(data))
		if err != nil || len(r) != 1 || len(r[0].Devices) != 60 {
			b.Fatalf("got %d reports, %v", len(r), err)
		}
	}
}
