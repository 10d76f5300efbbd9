package zpool

import (
	"bytes"
	"slices"
	"testing"
	"time"

	"github.com/zpool-exporter/zpool_exporter/internal/testkit/sample"
)

// rz1 of the OpenZFS 2.3 walk's spare scenario: virtio-zd12 stands in for
// the faulted virtio-zd08, so zpool lists it inside spare-1 and again in
// the spares section.
func spareInUse(t *testing.T, command string) *Vdev {
	t.Helper()
	f := sample.MustRead(t, "testdata/openzfs-2.3-guest/06-spare-inuse__"+command+".txt")
	var st *Status
	var err error
	if command == "zpool_status_-j_--json-int" {
		st, err = ParseStatusJSON(bytes.NewReader(f.Body))
	} else {
		st, err = ParseStatus(bytes.NewReader(f.Body), time.UTC)
	}
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range st.Pools {
		if p.Name == "rz1" {
			return p.Root
		}
	}
	t.Fatal("no pool rz1")
	return nil
}

func TestWalkVisitsEveryRowInPrintOrder(t *testing.T) {
	want := []string{
		"rz1 <- ",
		"raidz1-0 <- rz1",
		"virtio-zd07 <- raidz1-0",
		"raidz1-0/spare-1 <- raidz1-0",
		"virtio-zd08 <- raidz1-0/spare-1",
		"virtio-zd12 <- raidz1-0/spare-1",
		"virtio-zd09 <- raidz1-0",
		"virtio-zd10 <- rz1",
		"virtio-zd11 <- rz1",
		"virtio-zd12 <- rz1",
	}
	for _, command := range []string{"zpool_status_-s_-p", "zpool_status_-j_--json-int"} {
		var got []string
		spareInUse(t, command).Walk(func(v *Vdev, parent string) {
			got = append(got, v.Name+" <- "+parent)
		})
		if !slices.Equal(got, want) {
			t.Errorf("%s: Walk visited\n%q\nwant\n%q", command, got, want)
		}
	}
}

// The spare in use is visited once, as its copy in spare-1, and with its
// entry in the spares section, which is not visited by itself.
func TestWalkOnceVisitsAnActiveSpareOnce(t *testing.T) {
	want := []string{
		"rz1 <- ",
		"raidz1-0 <- rz1",
		"virtio-zd07 <- raidz1-0",
		"raidz1-0/spare-1 <- raidz1-0",
		"virtio-zd08 <- raidz1-0/spare-1",
		"virtio-zd12 <- raidz1-0/spare-1 (spare inuse)",
		"virtio-zd09 <- raidz1-0",
		"virtio-zd10 <- rz1",
		"virtio-zd11 <- rz1",
	}
	for _, command := range []string{"zpool_status_-s_-p", "zpool_status_-j_--json-int"} {
		root := spareInUse(t, command)
		var got []string
		root.WalkOnce(func(v *Vdev, parent string, spare *Vdev) {
			row := v.Name + " <- " + parent
			if spare != nil {
				if spare == v || spare.Class != ClassSpare {
					t.Errorf("%s: %s visited with spare %+v", command, v.Name, spare)
				}
				row += " (spare " + spare.State + ")"
			}
			got = append(got, row)
		})
		if !slices.Equal(got, want) {
			t.Errorf("%s: WalkOnce visited\n%q\nwant\n%q", command, got, want)
		}
	}
}

// A spare that stands in for nothing is an ordinary row.
func TestWalkOnceVisitsAnAvailableSpare(t *testing.T) {
	spare := &Vdev{Name: "sdc", Type: "disk", Class: ClassSpare, State: "avail"}
	root := &Vdev{Name: "tank", Type: "root", Children: []*Vdev{
		{Name: "mirror-0", Type: "mirror", Class: ClassNormal, Children: []*Vdev{
			{Name: "sda", Type: "disk", Class: ClassNormal},
			{Name: "sdb", Type: "disk", Class: ClassNormal},
		}},
		spare,
	}}
	var got []string
	root.WalkOnce(func(v *Vdev, parent string, entry *Vdev) {
		if entry != nil {
			t.Errorf("%s visited with spare %s", v.Name, entry.Name)
		}
		got = append(got, v.Name)
	})
	if want := []string{"tank", "mirror-0", "sda", "sdb", "sdc"}; !slices.Equal(got, want) {
		t.Errorf("WalkOnce visited %q, want %q", got, want)
	}
}
