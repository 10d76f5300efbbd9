package main

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"debug/elf"
	"encoding/hex"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/zpool-exporter/zpool_exporter/internal/testkit/e2e"
)

// distEnv stamps the test's builds with values no real build has.
var distEnv = []string{
	"VERSION=9.8.7-disttest",
	"REVISION=0123456789abcdef0123456789abcdef01234567",
	"BRANCH=disttest",
	"BUILD_USER=tester@distbox",
	"SOURCE_DATE_EPOCH=1700000000", // 20231114-22:13:20 UTC
}

// runDist runs scripts/dist.sh for platforms into dir.
func runDist(t *testing.T, root, dir string, platforms ...string) {
	t.Helper()
	cmd := exec.Command("bash", "scripts/dist.sh")
	cmd.Dir = root
	cmd.Env = append(append(os.Environ(), distEnv...), "PLATFORMS="+strings.Join(platforms, " "), "DIST_DIR="+dir)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("scripts/dist.sh: %v\n%s", err, out)
	}
}

// readTarball returns a tarball's regular files by name, and its modes.
func readTarball(t *testing.T, file string) (map[string][]byte, map[string]fs.FileMode) {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	files, modes := map[string][]byte{}, map[string]fs.FileMode{}
	stamped := true
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		if stamped && (h.Uid != 0 || h.Gid != 0 || h.ModTime.Unix() != 1700000000) {
			stamped = false // one error a tarball is enough
			t.Errorf("%s: %s owned by %d:%d, time %v; want 0:0 and SOURCE_DATE_EPOCH", file, h.Name, h.Uid, h.Gid, h.ModTime)
		}
		modes[strings.TrimSuffix(h.Name, "/")] = h.FileInfo().Mode()
		if h.Typeflag != tar.TypeReg {
			continue
		}
		body, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		files[h.Name] = body
	}
	return files, modes
}

// treeFiles returns the regular files under dir, by path relative to root.
func treeFiles(t *testing.T, root, dir string) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	err := filepath.WalkDir(filepath.Join(root, dir), func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		body, err := os.ReadFile(p)
		rel, _ := filepath.Rel(root, p)
		files[filepath.ToSlash(rel)] = body
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// `make dist` cross-builds a tarball per platform, stamped with the version,
// and their checksums; the binary in it reports what was stamped.
func TestDist(t *testing.T) {
	if testing.Short() {
		t.Skip("cross-builds the release tarballs; skipped with -short")
	}
	for _, tool := range []string{"bash", "tar", "gzip", "sha256sum", "git"} {
		if _, err := exec.LookPath(tool); err != nil {
			e2e.SkipOrFail(t, "scripts/dist.sh needs %s", tool)
		}
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	native := runtime.GOOS + "/" + runtime.GOARCH
	other := "freebsd/amd64"
	if native == other {
		other = "linux/amd64"
	}
	dist := t.TempDir()
	runDist(t, root, dist, native, other)

	name := func(platform string) string {
		return "zpool_exporter-9.8.7-disttest." + strings.ReplaceAll(platform, "/", "-")
	}
	entries, err := os.ReadDir(dist)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		got = append(got, e.Name())
	}
	want := []string{name(native) + ".tar.gz", name(other) + ".tar.gz", "sha256sums.txt"}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("%s holds %v, want %v", dist, got, want)
	}

	// sha256sums.txt lists each tarball once, with its checksum.
	sums, err := os.ReadFile(filepath.Join(dist, "sha256sums.txt"))
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]bool{}
	sc := bufio.NewScanner(bytes.NewReader(sums))
	for sc.Scan() {
		sum, file, ok := strings.Cut(sc.Text(), "  ")
		if !ok {
			t.Fatalf("sha256sums.txt: line %q is not `SUM  FILE`", sc.Text())
		}
		body, err := os.ReadFile(filepath.Join(dist, file))
		if err != nil {
			t.Fatalf("sha256sums.txt lists %s: %v", file, err)
		}
		h := sha256.Sum256(body)
		if hex.EncodeToString(h[:]) != sum {
			t.Errorf("sha256sums.txt: %s has %s, want %x", file, sum, h)
		}
		listed[file] = true
	}
	if len(listed) != 2 || !listed[name(native)+".tar.gz"] || !listed[name(other)+".tar.gz"] {
		t.Errorf("sha256sums.txt lists %v, want the two tarballs", listed)
	}

	// Each tarball: one top directory of its own name, holding the binary
	// for its platform, the README, the LICENSE, the install guide, deploy/ and the
	// generated dashboards and rules, byte for byte.
	shipped := treeFiles(t, root, "dashboards/out")
	if len(shipped) == 0 {
		t.Fatal("dashboards/out is empty")
	}
	for rel, body := range treeFiles(t, root, "deploy") {
		shipped[rel] = body
	}
	for _, f := range []string{"README.md", "LICENSE"} {
		body, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			t.Fatal(err)
		}
		shipped[f] = body
	}
	guide, err := os.ReadFile(filepath.Join(root, "docs", "install.md"))
	if err != nil {
		t.Fatal(err)
	}
	shipped["docs/install.md"] = guide
	binaries := []string{"zpool_exporter", "zpool_bench"}
	var nativeBin string
	for _, platform := range []string{native, other} {
		top := name(platform)
		files, modes := readTarball(t, filepath.Join(dist, top+".tar.gz"))
		for n := range modes {
			if n != top && !strings.HasPrefix(n, top+"/") {
				t.Errorf("%s: %s is outside the top directory %s", top, n, top)
			}
		}
		for _, b := range binaries {
			bin, ok := files[top+"/"+b]
			if !ok {
				t.Fatalf("%s: no %s", top, b)
			}
			if modes[top+"/"+b]&0o111 != 0o111 {
				t.Errorf("%s: %s mode %v, want executable by all", top, b, modes[top+"/"+b])
			}
			checkBinary(t, platform, b, bin, root)
		}
		bin := files[top+"/zpool_exporter"]
		for rel, body := range shipped {
			if got, ok := files[path.Join(top, rel)]; !ok {
				t.Errorf("%s: %s missing", top, rel)
			} else if !bytes.Equal(got, body) {
				t.Errorf("%s: %s differs from the checkout's", top, rel)
			}
		}
		if len(files) != len(shipped)+len(binaries) {
			var extra []string
			for n := range files {
				if rel := strings.TrimPrefix(n, top+"/"); !slices.Contains(binaries, rel) && shipped[rel] == nil {
					extra = append(extra, n)
				}
			}
			t.Errorf("%s: files beyond the binaries, README, LICENSE, docs/install.md, deploy/ and dashboards/out: %v", top, extra)
		}
		if platform == native {
			nativeBin = filepath.Join(t.TempDir(), "zpool_exporter")
			if err := os.WriteFile(nativeBin, bin, 0o755); err != nil {
				t.Fatal(err)
			}
		}
	}

	// The binary says what was stamped, in --version and in
	// zfs_exporter_build_info.
	out, err := exec.Command(nativeBin, "--version").CombinedOutput()
	if err != nil {
		t.Fatalf("--version: %v\n%s", err, out)
	}
	for _, want := range []string{
		"zpool_exporter, version 9.8.7-disttest (branch: disttest, revision: 0123456789abcdef0123456789abcdef01234567)",
		"build user:       tester@distbox",
		"build date:       20231114-22:13:20",
		"platform:         " + native,
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("--version lacks %q:\n%s", want, out)
		}
	}
	once := exec.Command(nativeBin, "--once", "--zpool.replay-dir", replayDir)
	var stderr bytes.Buffer
	once.Stderr = &stderr
	exposition, err := once.Output()
	if err != nil {
		t.Fatalf("--once: %v\n%s", err, stderr.String())
	}
	m := e2e.Parse(t, string(exposition))
	build := map[string]string{"version": "9.8.7-disttest", "revision": "0123456789abcdef0123456789abcdef01234567", "branch": "disttest",
		"goos": runtime.GOOS, "goarch": runtime.GOARCH}
	if v, ok := m.Get("zfs_exporter_build_info", build); !ok || v != 1 {
		t.Errorf("no zfs_exporter_build_info%v = 1 in --once output:\n%s", build, grepLines(string(exposition), "zfs_exporter_build_info"))
	}

	// Built again, the tarball is the same to the byte.
	again := t.TempDir()
	runDist(t, root, again, native)
	first, _ := os.ReadFile(filepath.Join(dist, name(native)+".tar.gz"))
	second, err := os.ReadFile(filepath.Join(again, name(native)+".tar.gz"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(first, second) {
		t.Errorf("two builds of %s differ (%d and %d bytes)", name(native), len(first), len(second))
	}
}

// checkBinary checks that bin is an ELF executable for platform, statically
// linked where Go links statically without cgo (not on illumos and Solaris,
// where Go always calls libc), and built with -trimpath.
func checkBinary(t *testing.T, platform, name string, bin []byte, root string) {
	t.Helper()
	f, err := elf.NewFile(bytes.NewReader(bin))
	if err != nil {
		t.Errorf("%s: %s is not ELF: %v", platform, name, err)
		return
	}
	goos, goarch, _ := strings.Cut(platform, "/")
	machine := map[string]elf.Machine{"amd64": elf.EM_X86_64, "arm64": elf.EM_AARCH64}[goarch]
	abi := map[string]elf.OSABI{"freebsd": elf.ELFOSABI_FREEBSD}[goos] // ELFOSABI_NONE elsewhere
	if f.Machine != machine || f.OSABI != abi {
		t.Errorf("%s: %s is for %v, %v; want %v, %v", platform, name, f.Machine, f.OSABI, machine, abi)
	}
	if goos == "linux" || goos == "freebsd" {
		for _, p := range f.Progs {
			if p.Type == elf.PT_INTERP {
				t.Errorf("%s: %s is dynamically linked (CGO_ENABLED=0 not in effect?)", platform, name)
			}
		}
	}
	if bytes.Contains(bin, []byte(root+"/")) {
		t.Errorf("%s: %s holds the checkout's path %s (built without -trimpath?)", platform, name, root)
	}
}

func grepLines(text, substr string) string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if strings.Contains(l, substr) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
