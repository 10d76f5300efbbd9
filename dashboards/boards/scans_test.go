package boards_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"testing"

	"github.com/zpool-exporter/zpool_exporter/dashboards/internal/contract"
)

// The scans table lists running scans first: it sorts by state, backwards,
// and of the states the exporter sends, scanning then paused come first
// that way.
func TestScansTableListsRunningScansFirst(t *testing.T) {
	var board struct {
		Panels []struct {
			Type    string `json:"type"`
			Title   string `json:"title"`
			Options struct {
				SortBy []struct {
					DisplayName string `json:"displayName"`
					Desc        bool   `json:"desc"`
				} `json:"sortBy"`
			} `json:"options"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(generated(t)["zfs-scans.json"], &board); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, p := range board.Panels {
		if p.Title != "Scans" || p.Type != "table" {
			continue
		}
		found = true
		if len(p.Options.SortBy) != 1 || p.Options.SortBy[0].DisplayName != "state" || !p.Options.SortBy[0].Desc {
			t.Errorf("the Scans table sorts by %+v, want state, descending", p.Options.SortBy)
		}
	}
	if !found {
		t.Fatal("no Scans table on the scans board")
	}

	paths, err := filepath.Glob(contract.GoldenGlob)
	if err != nil || len(paths) == 0 {
		t.Fatalf("no golden expositions (%v)", err)
	}
	stateLabel := regexp.MustCompile(`(?m)^zfs_scan_state\{.*\bstate="([^"]+)"`)
	seen := map[string]bool{}
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range stateLabel.FindAllSubmatch(data, -1) {
			seen[string(m[1])] = true
		}
	}
	var states []string
	for s := range seen {
		states = append(states, s)
	}
	slices.Sort(states)
	slices.Reverse(states)
	if len(states) < 2 || states[0] != "scanning" || states[1] != "paused" {
		t.Errorf("the exporter's scan states sort backwards as %v: running scans are not first", states)
	}
}
