package e2e

import (
	"bytes"
	"net/http"
	"os/exec"
	"sync"
	"testing"
	"time"
)

// readyClient gives up on a server that hangs rather than the test.
var readyClient = &http.Client{Timeout: 30 * time.Second}

// StartServer starts cmd, a Prometheus or an Alertmanager, waits until
// url's /-/ready answers 200, and kills it at the test's cleanup, showing
// what it printed when the test failed. The wait is generous: Prometheus
// replays its WAL and loads its rules first, which takes seconds on a
// loaded machine.
func StartServer(t testing.TB, name string, cmd *exec.Cmd, url string) {
	t.Helper()
	log := &lockedBuffer{}
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
		if t.Failed() {
			t.Logf("%s log:\n%s", name, log.String())
		}
	})
	const wait = 60 * time.Second
	for deadline := time.Now().Add(wait); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		select {
		case err := <-exited:
			exited <- err // for the cleanup
			t.Fatalf("%s exited before it was ready: %v", name, err)
		default:
		}
		resp, err := readyClient.Get(url + "/-/ready")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
	}
	t.Fatalf("%s not ready at %s within %s", name, url, wait)
}

// lockedBuffer is a buffer that a process writes while a test reads it.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
