//go:build linux

package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/zpool-exporter/zpool_exporter/internal/testkit/e2e"
)

// The run from a client machine with the client on a network of its own:
// zpool_bench runs in a network namespace where only the loopback is up,
// reaches the exporter through a port forwarded into that namespace, as a
// NAS is reached across a network, and copies into the pool itself.
func TestRunFromAClientOnAnotherNetwork(t *testing.T) {
	z := e2e.RequireZFSFuse(t)
	ip, err := exec.LookPath("ip")
	if err != nil {
		e2e.SkipOrFail(t, "ip is not installed (Debian package iproute2)")
	}
	ns := newNetns(t, ip)
	copyFromAClient(t, z, func(exp *e2e.Exporter) (string, []string) {
		u, err := url.Parse(exp.URL)
		if err != nil {
			t.Fatal(err)
		}
		// Before anything listens in the namespace: its loopback is not
		// this machine's, so the exporter's address leads nowhere there.
		var dialErr error
		err = inNetns(ns, func() {
			var c net.Conn
			if c, dialErr = net.DialTimeout("tcp", u.Host, 2*time.Second); dialErr == nil {
				c.Close()
			}
		})
		if err != nil {
			t.Fatal(err)
		}
		if dialErr == nil {
			t.Fatalf("the exporter's %s answers inside network namespace %s: the client's network is not separate", u.Host, ns)
		}
		u.Host = forward(t, ns, u.Host)
		return u.String(), []string{ip, "netns", "exec", ns}
	})
}

// newNetns creates a network namespace with only its loopback up, deleted
// when the test ends, and returns its name.
func newNetns(t *testing.T, ip string) string {
	t.Helper()
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	name := "zpe-client-" + hex.EncodeToString(b)
	if out, err := exec.Command(ip, "netns", "add", name).CombinedOutput(); err != nil {
		e2e.SkipOrFail(t, "cannot create a network namespace: ip netns add: %v: %s", err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command(ip, "netns", "delete", name).CombinedOutput(); err != nil {
			t.Errorf("ip netns delete %s: %v: %s", name, err, out)
		}
	})
	if out, err := exec.Command(ip, "-n", name, "link", "set", "lo", "up").CombinedOutput(); err != nil {
		t.Fatalf("ip -n %s link set lo up: %v: %s", name, err, out)
	}
	return name
}

// inNetns runs fn on an OS thread switched into the named network
// namespace; the sockets fn opens stay in that namespace. A thread that
// cannot switch back stays locked to its goroutine, so the runtime ends it
// rather than run other goroutines in the wrong namespace.
func inNetns(name string, fn func()) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		home, err := os.Open("/proc/thread-self/ns/net")
		if err != nil {
			runtime.UnlockOSThread()
			errc <- err
			return
		}
		defer home.Close()
		ns, err := os.Open(filepath.Join("/run/netns", name))
		if err != nil {
			runtime.UnlockOSThread()
			errc <- err
			return
		}
		defer ns.Close()
		if err := unix.Setns(int(ns.Fd()), unix.CLONE_NEWNET); err != nil {
			runtime.UnlockOSThread()
			errc <- fmt.Errorf("entering network namespace %s: %w", name, err)
			return
		}
		fn()
		if err := unix.Setns(int(home.Fd()), unix.CLONE_NEWNET); err != nil {
			errc <- fmt.Errorf("leaving network namespace %s: %w", name, err)
			return
		}
		runtime.UnlockOSThread()
		errc <- nil
	}()
	return <-errc
}

// forward listens on 127.0.0.1 inside network namespace ns and passes each
// connection on to addr in this process's own namespace, as the network
// between a client and a NAS would; it returns the address listened on.
// The test's cleanup stops it and closes the connections it carries.
func forward(t *testing.T, ns, addr string) string {
	t.Helper()
	var (
		l         net.Listener
		listenErr error
	)
	if err := inNetns(ns, func() { l, listenErr = net.Listen("tcp", "127.0.0.1:0") }); err != nil {
		t.Fatal(err)
	}
	if listenErr != nil {
		t.Fatalf("listening in network namespace %s: %v", ns, listenErr)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	t.Cleanup(func() {
		cancel()
		l.Close()
		wg.Wait()
	})
	wg.Go(func() {
		for {
			in, err := l.Accept()
			if err != nil {
				return
			}
			wg.Go(func() { pipe(ctx, in, addr) })
		}
	})
	return l.Addr().String()
}

// pipe copies between in and a new connection to addr, both ways, until
// either side closes or ctx ends, then closes both.
func pipe(ctx context.Context, in net.Conn, addr string) {
	var d net.Dialer
	out, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		in.Close()
		return
	}
	closeBoth := func() {
		in.Close()
		out.Close()
	}
	stop := context.AfterFunc(ctx, closeBoth)
	defer stop()
	done := make(chan struct{}, 2)
	go func() { _, _ = io.Copy(out, in); done <- struct{}{} }()
	go func() { _, _ = io.Copy(in, out); done <- struct{}{} }()
	<-done
	closeBoth() // HTTP does not half-close: the other way ends too
	<-done
}
