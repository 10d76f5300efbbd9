package sample

import (
	"os"
	"path/filepath"
	"testing"
)

// ZPE_SHARED moves the shared samples; Seeds reads them there and, unlike
// Dir, neither skips nor fails when they are missing.
func TestSharedEnv(t *testing.T) {
	shared := t.TempDir()
	if err := os.MkdirAll(filepath.Join(shared, "corpus", "x"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(shared, "corpus", "x", "a.txt"), []byte("# command: zpool status\n# ---\nbody\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv(SharedEnv, shared)
	if got := Dir(t, "corpus/x"); got != filepath.Join(shared, "corpus", "x") {
		t.Errorf("Dir = %s, want it under %s", got, shared)
	}
	if got := Bodies(Seeds(t, "corpus/x", "*.txt")); len(got) != 1 || string(got[0]) != "body\n" {
		t.Errorf("Seeds = %q, want the one body", got)
	}

	t.Setenv(SharedEnv, filepath.Join(shared, "missing"))
	t.Setenv("CI", "true")
	if got := Seeds(t, "corpus/x", "*.txt"); got != nil {
		t.Errorf("Seeds without shared samples = %v, want none", got)
	}
}
