package boards_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/zpool-exporter/zpool_exporter/dashboards/internal/contract"
)

// stateColours reads the value mappings of the "state" column of a
// table panel: state word to colour.
func stateColours(t *testing.T, file, title string) map[string]string {
	t.Helper()
	var d struct {
		Panels []struct {
			Title       string `json:"title"`
			FieldConfig struct {
				Overrides []struct {
					Matcher struct {
						ID      string `json:"id"`
						Options string `json:"options"`
					} `json:"matcher"`
					Properties []struct {
						ID    string          `json:"id"`
						Value json.RawMessage `json:"value"`
					} `json:"properties"`
				} `json:"overrides"`
			} `json:"fieldConfig"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(generated(t)[file], &d); err != nil {
		t.Fatal(err)
	}
	colours := map[string]string{}
	for _, p := range d.Panels {
		if p.Title != title {
			continue
		}
		for _, o := range p.FieldConfig.Overrides {
			if o.Matcher.ID != "byName" || o.Matcher.Options != "state" {
				continue
			}
			for _, prop := range o.Properties {
				if prop.ID != "mappings" {
					continue
				}
				var maps []struct {
					Type    string `json:"type"`
					Options map[string]struct {
						Color string `json:"color"`
					} `json:"options"`
				}
				if err := json.Unmarshal(prop.Value, &maps); err != nil {
					t.Fatal(err)
				}
				for _, m := range maps {
					for word, r := range m.Options {
						colours[word] = r.Color
					}
				}
			}
		}
	}
	if len(colours) == 0 {
		t.Fatalf("%s: panel %q has no value mappings on its state column", file, title)
	}
	return colours
}

// The vdev and pool tables colour states like zpool status reads, and
// every state the exporter was seen to serve has a colour.
func TestStateColours(t *testing.T) {
	want := map[string]string{
		"online": "green", "degraded": "orange",
		"faulted": "red", "unavail": "red", "removed": "red",
		"offline": "blue", "suspended": "purple",
		"avail": "green", "inuse": "yellow",
	}
	stateLabel := regexp.MustCompile(`^zfs_(?:pool|vdev)_state\{.*\bstate="([^"]*)"`)
	seen := map[string]bool{}
	paths, err := filepath.Glob(contract.GoldenGlob)
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range paths {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range regexp.MustCompile(`(?m)^zfs_(?:pool|vdev)_state\{.*$`).FindAllString(string(data), -1) {
			if m := stateLabel.FindStringSubmatch(line); m != nil {
				seen[m[1]] = true
			}
		}
	}
	if len(seen) == 0 {
		t.Fatalf("no zfs_pool_state or zfs_vdev_state in %s", contract.GoldenGlob)
	}
	for _, panel := range []struct{ file, title string }{
		{"zfs-pools.json", "Vdevs"},
		{"zfs-pools.json", "Pools"},
		{"zfs-pools.json", "Spares"},
	} {
		got := stateColours(t, panel.file, panel.title)
		for word, colour := range want {
			if got[word] != colour {
				t.Errorf("%s panel %q: state %s is %q, want %q", panel.file, panel.title, word, got[word], colour)
			}
		}
		for word := range seen {
			if got[word] == "" {
				t.Errorf("%s panel %q: the exporter serves state %q, which has no colour", panel.file, panel.title, word)
			}
		}
	}
}
