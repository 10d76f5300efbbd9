package e2e

import (
	"testing"
)

// The address comes from exporter-toolkit's line in either log format,
// however the writes split it, and only the first one counts.
func TestLogFindsListenAddress(t *testing.T) {
	for _, c := range []struct {
		name   string
		writes []string
		want   string
	}{
		{"logfmt", []string{
			`time=2026-12-03T12:36:50.102Z level=INFO source=main.go:239 msg="starting zpool_exporter"` + "\n",
			`time=2026-12-03T12:36:50.104Z level=INFO source=tls_config.go:395 msg="Listening on" address=127.0.0.1:41234` + "\n",
			`time=2026-12-03T12:36:50.104Z level=INFO source=tls_config.go:398 msg="TLS is disabled." http2=false address=127.0.0.1:41234` + "\n",
		}, "127.0.0.1:41234"},
		{"json", []string{
			`{"time":"2026-12-03T12:36:50.104Z","level":"INFO","source":"tls_config.go:395","msg":"Listening on","address":"127.0.0.1:39001"}` + "\n",
		}, "127.0.0.1:39001"},
		{"split mid-line", []string{`level=INFO msg="Listen`, `ing on" address=[::1]:9`, "134\n"}, "[::1]:9134"},
		{"first of two", []string{
			`level=INFO msg="Listening on" address=127.0.0.1:1111` + "\n",
			`level=INFO msg="Listening on" address=127.0.0.1:2222` + "\n",
		}, "127.0.0.1:1111"},
	} {
		t.Run(c.name, func(t *testing.T) {
			l := NewLog()
			for _, w := range c.writes {
				if _, err := l.Write([]byte(w)); err != nil {
					t.Fatal(err)
				}
			}
			select {
			case got := <-l.address:
				if got != c.want {
					t.Errorf("address %q, want %q", got, c.want)
				}
			default:
				t.Fatalf("no address found in %q", l.String())
			}
		})
	}
}

// A log without the line gives no address.
func TestLogWithoutListenLine(t *testing.T) {
	l := NewLog()
	l.Write([]byte(`level=ERROR msg="web server failed" err="listen tcp 127.0.0.1:35359: bind: address already in use"` + "\n"))
	select {
	case got := <-l.address:
		t.Errorf("address %q from a log that never listened", got)
	default:
	}
}
