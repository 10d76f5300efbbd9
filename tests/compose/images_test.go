package compose

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zpool-exporter/zpool_exporter/tests/internal/prom3"
	"github.com/zpool-exporter/zpool_exporter/tests/internal/repotest"
)

// debootstrapArgs make the root of every base image: Debian 12 with the
// Prometheus and Alertmanager that Debian packages.
var debootstrapArgs = []string{"--variant=minbase", "--include=ca-certificates,prometheus,prometheus-alertmanager", "bookworm"}

const debianMirror = "http://deb.debian.org/debian"

// imageMissing tells whether the engine has no image of that name.
func (e *engine) imageMissing(ref string) bool {
	_, err := e.docker(context.Background(), nil, "image", "inspect", "--format", "{{.Id}}", ref)
	return err != nil
}

// debianImage returns the base image, made by debootstrap and docker
// import the first time and kept in the engine's state afterwards. Its
// name carries a hash of how it is made.
func debianImage(t *testing.T, e *engine) string {
	t.Helper()
	ref := fmt.Sprintf("zpool-exporter-test/debian:bookworm-%x", sha256.Sum256([]byte(strings.Join(debootstrapArgs, " "))))[:len("zpool-exporter-test/debian:bookworm-")+12]
	if !e.imageMissing(ref) {
		return ref
	}
	debootstrap := repotest.Tool(t, "debootstrap", "debootstrap")
	tar := repotest.Tool(t, "tar", "tar")
	root := filepath.Join(t.TempDir(), "root")
	began := time.Now()
	if out, err := exec.Command(debootstrap, append(debootstrapArgs, root, debianMirror)...).CombinedOutput(); err != nil {
		t.Fatalf("debootstrap %s: %v\n%s", strings.Join(debootstrapArgs, " "), err, tail(out))
	}
	// docker import reads the root as a tar stream on its standard input.
	pack := exec.Command(tar, "-C", root, "-c", ".")
	stream, err := pack.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := pack.Start(); err != nil {
		t.Fatal(err)
	}
	imp := exec.Command(e.client, "import", "--change", "ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "-", ref)
	imp.Env, imp.Stdin = e.env(), stream
	out, impErr := imp.CombinedOutput()
	if err := errors.Join(pack.Wait(), impErr); err != nil {
		t.Fatalf("docker import of the Debian root: %v\n%s", err, out)
	}
	t.Logf("made %s with debootstrap in %s", ref, time.Since(began).Round(time.Second))
	return ref
}

// goImage returns the base image with the machine's Go toolchain in
// /usr/local/go, as Docker's golang images have it.
func goImage(t *testing.T, e *engine, debian string) string {
	t.Helper()
	out, err := exec.Command(goCommand(), "env", "GOROOT", "GOVERSION").Output()
	lines := strings.Fields(string(out))
	if err != nil || len(lines) != 2 {
		t.Fatalf("go env GOROOT GOVERSION: %v %q", err, out)
	}
	goroot, version := lines[0], strings.TrimPrefix(lines[1], "go")
	ref := fmt.Sprintf("zpool-exporter-test/golang:%s-%s", version, strings.TrimPrefix(debian, "zpool-exporter-test/debian:"))
	if !e.imageMissing(ref) {
		return ref
	}
	ctx := t.TempDir()
	// Hard links where the file system allows, a copy where it does not.
	if exec.Command("cp", "-al", goroot, filepath.Join(ctx, "go")).Run() != nil {
		os.RemoveAll(filepath.Join(ctx, "go"))
		if out, err := exec.Command("cp", "-a", goroot, filepath.Join(ctx, "go")).CombinedOutput(); err != nil {
			t.Fatalf("copying %s: %v\n%s", goroot, err, out)
		}
	}
	dockerfile := "FROM " + debian + "\nCOPY go /usr/local/go\nENV GOPATH=/go PATH=/go/bin:/usr/local/go/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin\n"
	if err := os.WriteFile(filepath.Join(ctx, "Dockerfile"), []byte(dockerfile), 0o644); err != nil {
		t.Fatal(err)
	}
	e.mustDocker(t, "build", "--quiet", "--tag", ref, ctx)
	return ref
}

// prometheusImage builds an image of the base that runs the Prometheus
// of docker-compose.yml's version, built by tests/internal/prom3: the
// compose configuration takes settings that Debian's 2.42 refuses. The
// compose file must name that version.
func prometheusImage(t *testing.T, e *engine, debian, composeImage string) string {
	t.Helper()
	// Prometheus 3.N.P is the Go module version v0.3NN.P.
	var minor, patch int
	if _, err := fmt.Sscanf(prom3.Version, "v0.3%02d.%d", &minor, &patch); err != nil {
		t.Fatalf("prom3.Version %s: %v", prom3.Version, err)
	}
	if want := fmt.Sprintf("prom/prometheus:v3.%d.%d", minor, patch); composeImage != want {
		t.Fatalf("docker-compose.yml runs %s, the test runs Prometheus %s (%s): update one or the other", composeImage, want, prom3.Version)
	}
	bin := prom3.Binary(t, tmpRoot)
	ref := "zpool-exporter-test/prometheus3:" + prom3.Version
	ctx := t.TempDir()
	if out, err := exec.Command("cp", bin, filepath.Join(ctx, "prometheus")).CombinedOutput(); err != nil {
		t.Fatalf("copying %s: %v\n%s", bin, err, out)
	}
	dockerfile := fmt.Sprintf("FROM %s\nCOPY prometheus /usr/local/bin/prometheus\nENTRYPOINT [\"/usr/local/bin/prometheus\"]\n", debian)
	if err := os.WriteFile(filepath.Join(ctx, "Dockerfile"), []byte(dockerfile), 0o644); err != nil {
		t.Fatal(err)
	}
	e.mustDocker(t, "build", "--quiet", "--tag", ref, ctx)
	return ref
}

// serviceImage builds an image of the base that runs one of Debian's
// programs: Alertmanager as Debian packages it.
func serviceImage(t *testing.T, e *engine, debian, name, entrypoint string) string {
	t.Helper()
	ref := "zpool-exporter-test/" + name + ":" + strings.TrimPrefix(debian, "zpool-exporter-test/debian:")
	ctx := t.TempDir()
	dockerfile := fmt.Sprintf("FROM %s\nENTRYPOINT [%q]\n", debian, entrypoint)
	if err := os.WriteFile(filepath.Join(ctx, "Dockerfile"), []byte(dockerfile), 0o644); err != nil {
		t.Fatal(err)
	}
	e.mustDocker(t, "build", "--quiet", "--tag", ref, ctx)
	return ref
}

// moduleProxy serves the machine's Go module cache as a module proxy on
// 127.0.0.1, so that the image build downloads the exporter's modules
// from this machine and not from the network. The cache's download
// directory has the proxy protocol's layout; `go mod download` first
// fills it with every module of the build list, those of other platforms
// too, as the Dockerfile's `go mod download` asks for them all.
func moduleProxy(t *testing.T) string {
	t.Helper()
	gobin := goCommand()
	download := exec.Command(gobin, "mod", "download")
	download.Dir = repotest.Root
	if out, err := download.CombinedOutput(); err != nil {
		t.Fatalf("go mod download: %v\n%s", err, out)
	}
	out, err := exec.Command(gobin, "env", "GOMODCACHE").Output()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(strings.TrimSpace(string(out)), "cache", "download")
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.FileServer(http.Dir(dir)), ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	return "http://" + l.Addr().String()
}

// composeCLI builds Docker Compose from the module of composecli/, once a
// run (the Go build cache keeps it between runs).
func composeCLI(t *testing.T) string {
	t.Helper()
	gobin := goCommand()
	bin := filepath.Join(tmpRoot, "docker-compose")
	if _, err := os.Stat(bin); err == nil {
		return bin
	}
	dir := repotest.Path("tests", "compose", "composecli")
	version, err := exec.Command(gobin, "list", "-C", dir, "-m", "-f", "{{.Version}}", "github.com/docker/compose/v5").Output()
	if err != nil {
		t.Fatalf("go list in %s: %v", dir, err)
	}
	build := exec.Command(gobin, "build", "-C", dir, "-o", bin,
		"-ldflags=-X github.com/docker/compose/v5/internal.Version="+strings.TrimSpace(string(version)),
		"github.com/docker/compose/v5/cmd")
	build.Env = append(os.Environ(), "GOWORK=off")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building docker compose: %v\n%s", err, out)
	}
	return bin
}

// goCommand is the go command, found in PATH as the other tests find it.
func goCommand() string { return "go" }

// tail is the end of a long output, for an error message.
func tail(out []byte) string {
	if len(out) > 4000 {
		out = out[len(out)-4000:]
	}
	return string(out)
}
