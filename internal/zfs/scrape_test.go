package zfs

import (
	"reflect"
	"slices"
	"testing"
)

// A collector sees of ZFS exactly the reads a Scrape offers: the shared
// ones (Status, Properties) and those it names as the client's, and the
// scrape's timeline (Plan). Nothing
// of the client is reachable through it, so that no collector runs
// `zpool status` a second time by asking the client past the scrape.
func TestScrapeOffersOnlyItsReads(t *testing.T) {
	typ := reflect.TypeFor[*Scrape]()
	var methods []string
	for m := range typ.Methods() {
		methods = append(methods, m.Name)
	}
	want := []string{"Datasets", "Detected", "Histograms", "KstatPoolStates", "Kstats", "Plan", "Properties",
		"Queues", "Status", "VdevList", "VdevProperties", "Version"}
	if !slices.Equal(methods, want) {
		t.Errorf("Scrape's methods are %v, want %v", methods, want)
	}
	for f := range typ.Elem().Fields() {
		if f.IsExported() {
			t.Errorf("Scrape has the exported field %s", f.Name)
		}
	}
}
