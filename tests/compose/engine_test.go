package compose

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/zpool-exporter/zpool_exporter/internal/testkit/e2e"
	"github.com/zpool-exporter/zpool_exporter/tests/internal/repotest"
)

// cacheDir keeps the engine's images and build cache between runs: the
// Debian root, the Go image and the module downloads are made once.
const cacheDir = "/var/cache/zpool-exporter/compose-test"

// engine is a Docker engine started for the tests, with a socket, a state
// directory and a log of its own, on no network but the host's.
type engine struct {
	socket string
	client string // a docker CLI that builds with BuildKit
	log    string
	cmd    *exec.Cmd
}

// startEngine starts dockerd and stops it when the test ends. It creates
// no bridge and touches no firewall rule or sysctl: a container has the
// host's network or none.
func startEngine(t *testing.T) *engine {
	t.Helper()
	if os.Geteuid() != 0 {
		e2e.SkipOrFail(t, "a Docker engine of the test's own needs root")
	}
	dockerd := repotest.Tool(t, "dockerd", "docker.io")
	client := buildkitClient(t)
	if err := os.MkdirAll(cacheDir, 0o700); err != nil {
		t.Fatal(err)
	}
	lockCache(t)

	dir := t.TempDir()
	// A unix socket path is limited to 108 bytes: keep it short.
	run, err := os.MkdirTemp("", "zpe-dockerd-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(run) })
	e := &engine{socket: filepath.Join(run, "docker.sock"), client: client, log: filepath.Join(dir, "dockerd.log")}
	logFile, err := os.Create(e.log)
	if err != nil {
		t.Fatal(err)
	}
	e.cmd = exec.Command(dockerd,
		"--host=unix://"+e.socket,
		"--data-root="+filepath.Join(cacheDir, "docker"),
		"--exec-root="+filepath.Join(run, "exec"),
		"--pidfile="+filepath.Join(run, "docker.pid"),
		"--bridge=none", "--iptables=false", "--ip6tables=false", "--ip-forward=false", "--ip-masq=false",
	)
	e.cmd.Stdout, e.cmd.Stderr = logFile, logFile
	// Its own process group, so that the containerd it starts ends with it.
	e.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := e.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- e.cmd.Wait(); logFile.Close() }()
	t.Cleanup(func() { e.stop(t, exited) })

	deadline := time.Now().Add(time.Minute)
	for {
		if _, err := e.docker(context.Background(), nil, "version"); err == nil {
			break
		}
		select {
		case err := <-exited:
			exited <- err
			t.Fatalf("dockerd exited: %v\n%s", err, e.logTail())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("dockerd did not answer on %s within a minute\n%s", e.socket, e.logTail())
		}
		time.Sleep(200 * time.Millisecond)
	}
	return e
}

// stop ends dockerd, which stops its containerd, and then whatever of its
// process group is left.
func (e *engine) stop(t *testing.T, exited chan error) {
	pgid := e.cmd.Process.Pid
	e.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-exited:
	case <-time.After(30 * time.Second):
		t.Errorf("dockerd did not stop within 30 s of SIGTERM; killed\n%s", e.logTail())
		syscall.Kill(-pgid, syscall.SIGKILL)
		<-exited
	}
	syscall.Kill(-pgid, syscall.SIGKILL)
}

func (e *engine) logTail() string {
	data, _ := os.ReadFile(e.log)
	if len(data) > 4000 {
		data = data[len(data)-4000:]
	}
	return string(data)
}

// env is the environment of the engine's clients.
func (e *engine) env() []string {
	return append(os.Environ(), "DOCKER_HOST=unix://"+e.socket, "DOCKER_BUILDKIT=1")
}

// docker runs the client and returns its standard output; stdin, when not
// nil, is its standard input.
func (e *engine) docker(ctx context.Context, stdin *os.File, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, e.client, args...)
	cmd.Env = e.env()
	cmd.Stdin = stdin
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), fmt.Errorf("docker %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return stdout.String(), nil
}

// mustDocker is docker that fails the test.
func (e *engine) mustDocker(t testing.TB, args ...string) string {
	t.Helper()
	out, err := e.docker(context.Background(), nil, args...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// buildkitClient finds a docker CLI that builds with BuildKit: one with
// the buildx plugin, or one from before Docker 23, which has BuildKit
// built in, as Debian 12's docker.io has. The Dockerfile's cache mounts
// need BuildKit; newer CLIs without buildx fall back to the classic
// builder, which refuses them.
func buildkitClient(t *testing.T) string {
	t.Helper()
	var tried []string
	for _, candidate := range []string{"docker", "/usr/bin/docker"} {
		p, err := exec.LookPath(candidate)
		if err != nil {
			continue
		}
		if exec.Command(p, "buildx", "version").Run() == nil {
			return p
		}
		// Without an engine to ask, version still prints the client's
		// own, and exits 1.
		out, _ := exec.Command(p, "version", "--format", "{{.Client.Version}}").Output()
		version := strings.TrimSpace(string(out))
		var major int
		if _, err := fmt.Sscanf(version, "%d.", &major); err == nil && major < 23 {
			return p
		}
		tried = append(tried, fmt.Sprintf("%s (version %q, no buildx)", p, version))
	}
	repotest.Tool(t, "docker", "docker.io")
	e2e.SkipOrFail(t, "no docker CLI that builds with BuildKit: tried %s; install Debian's docker.io or the buildx plugin", strings.Join(tried, ", "))
	return ""
}

// lockCache keeps two runs from sharing the engine's state directory.
func lockCache(t *testing.T) {
	t.Helper()
	f, err := os.OpenFile(filepath.Join(cacheDir, "lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
}
