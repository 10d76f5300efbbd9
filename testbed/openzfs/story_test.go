//go:build testbed

package openzfs

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/zpool-exporter/zpool_exporter/internal/testkit/e2e"
)

// TestOpenZFSStory records the story that the datasets and ARC boards'
// pictures are drawn from (the walk's TestStory) in the OpenZFS 2.4
// guest, and writes its captures to the directory ZPE_STORY names (make
// story). It checks nothing, and runs only when asked: about ten minutes.
func TestOpenZFSStory(t *testing.T) {
	keep := os.Getenv("ZPE_STORY")
	if keep == "" {
		t.Skip("ZPE_STORY is not set: the pictures' story is recorded only when asked (make story)")
	}
	if os.Geteuid() != 0 {
		e2e.SkipOrFail(t, "the OpenZFS test bed needs root")
	}
	if _, err := exec.LookPath("qemu-system-x86_64"); err != nil {
		e2e.SkipOrFail(t, "qemu-system-x86_64 is not installed (Debian package qemu-system-x86)")
	}
	image := buildImage(t, "2.4")
	job := t.TempDir()
	goBuild(t, "test", "-c", "-tags", "openzfsguest", "-o", filepath.Join(job, "walk.test"), "./walk")
	writeJobScript(t, job, "walk.test", "/usr/local/bin/walk.test -test.v -test.timeout 40m -test.run '^TestStory$' -story -capture /job/story")
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Minute)
	defer cancel()
	args := []string{"run-job.sh", "--image", image, "--job", job, "--disks", "6", "--disk-size", "2G", "--timeout", "2700", "--cpus", "4"}
	out, err := runJob(ctx, job, guestBootWait, "bash", args...)
	if errors.Is(err, errStuckAtBoot) {
		out, err = runJob(ctx, job, guestBootWait, "bash", args...)
	}
	log, _ := os.ReadFile(filepath.Join(job, "log"))
	t.Log(string(log))
	if err != nil {
		t.Fatalf("the guest job failed: %v\n%s", err, tail(out, 40))
	}
	if err := os.RemoveAll(keep); err != nil {
		t.Fatal(err)
	}
	keepCaptures(t, filepath.Join(job, "story"), keep)
}
