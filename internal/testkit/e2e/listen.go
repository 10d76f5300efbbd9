package e2e

import (
	"bytes"
	"fmt"
	"net/http"
	"os/exec"
	"regexp"
	"sync"
	"time"
)

// ListenAnywhere is the flag that has an exporter listen on a port the
// kernel picks. A port picked by the test and handed over would be free
// only until another process of a parallel test took it, and an exporter
// of another test on it would answer for this one.
const ListenAnywhere = "--web.listen-address=127.0.0.1:0"

// Log is an exporter's standard error, kept whole and safe to read while
// the exporter writes it. It finds the address the exporter listens on in
// exporter-toolkit's "Listening on" line, logfmt or JSON.
type Log struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	address chan string // receives the first address logged
	found   bool
}

// NewLog returns a Log to set as an exporter's standard error.
func NewLog() *Log { return &Log{address: make(chan string, 1)} }

var listeningOn = regexp.MustCompile(`"?msg"?[=:]"Listening on"[ ,]"?address"?[=:]"?([^\s",]+)`)

func (l *Log) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf.Write(p)
	// Whole lines only: a write may end in the middle of the address.
	if lines := l.buf.Bytes()[:bytes.LastIndexByte(l.buf.Bytes(), '\n')+1]; !l.found {
		if m := listeningOn.FindSubmatch(lines); m != nil {
			l.found = true
			l.address <- string(m[1])
		}
	}
	return len(p), nil
}

func (l *Log) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// StartListening starts cmd, an exporter given ListenAnywhere, with log
// as its standard error, and waits until it says where it listens and
// answers there. It returns the exporter's URL. On an error it kills and
// reaps cmd; otherwise the caller waits for it. An exporter that exits
// early is seen only when wait is over: the caller owns cmd.Wait.
func StartListening(cmd *exec.Cmd, log *Log, wait time.Duration) (string, error) {
	cmd.Stderr = log
	if err := cmd.Start(); err != nil {
		return "", err
	}
	fail := func(format string, args ...any) (string, error) {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return "", fmt.Errorf(format+"; log:\n%s", append(args, log.String())...)
	}
	deadline := time.Now().Add(wait)
	var url string
	select {
	case addr := <-log.address:
		url = "http://" + addr
	case <-time.After(wait):
		return fail("the exporter did not say where it listens within %s", wait)
	}
	for {
		resp, err := http.Get(url + "/-/healthy")
		if err == nil {
			resp.Body.Close()
			return url, nil
		}
		if time.Now().After(deadline) {
			return fail("the exporter did not answer on %s within %s", url, wait)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
