package collector

import (
	"fmt"
	"regexp"
	"strings"
)

// This file finds the disk, as the operating system's iostat names it,
// under a leaf vdev on illumos, Solaris and FreeBSD. zpool prints a leaf
// by its device name relative to /dev/dsk (illumos, Solaris) or /dev
// (FreeBSD), often a slice or partition of the disk iostat reports on.

// illumosDiskName matches a descriptive disk name as `iostat -n` prints
// it: controller, optional target (a number, or a WWN in hex with MPxIO)
// and disk, then the slice (s0-s15) or fdisk partition (p0-p4) zpool may
// name.
var illumosDiskName = regexp.MustCompile(`^(c[0-9]+(?:t[0-9A-Fa-f]+)?d[0-9]+)(?:[sp][0-9]+)?$`)

// freebsdDiskName matches a disk or partition of a disk by its GEOM
// provider name: the driver and unit (ada0, da12, nvd0, nda0, vtbd0, md3),
// then a GPT partition (p3), an MBR slice with an optional BSD partition
// (s1, s4a) or a BSD partition alone (a).
var freebsdDiskName = regexp.MustCompile(`^([a-z]+[0-9]+)(?:p[0-9]+|s[0-9]+[a-h]?|[a-h])?$`)

// freebsdLayers are suffixes of GEOM classes that sit on one provider and
// keep its name: GELI encryption and gnop.
var freebsdLayers = []string{".eli", ".nop"}

// iostatDiskOf returns the disk iostat reports for a leaf vdev name or
// path on os, by name alone. It returns false for names that need the
// live system: FreeBSD GEOM labels (gpt/..., gptid/..., diskid/...),
// file vdevs, and illumos names that are no cXtYdZ.
func iostatDiskOf(os, leaf string) (string, bool) {
	switch os {
	case "illumos", "solaris":
		name := leaf
		for _, dir := range []string{"/dev/dsk/", "/dev/rdsk/"} {
			name = strings.TrimPrefix(name, dir)
		}
		if m := illumosDiskName.FindStringSubmatch(name); m != nil {
			return m[1], true
		}
	case "freebsd":
		name := strings.TrimPrefix(leaf, "/dev/")
		for _, layer := range freebsdLayers {
			name = strings.TrimSuffix(name, layer)
		}
		if m := freebsdDiskName.FindStringSubmatch(name); m != nil {
			return m[1], true
		}
	}
	return "", false
}

// iostatDiskResolver finds the disk under a leaf vdev by the name rules,
// and through provider for names they cannot map.
type iostatDiskResolver struct {
	os string
	// provider returns the GEOM provider under a label (gpt/zfs0 ->
	// ada0p3), whose disk the rules then find: on FreeBSD, from
	// `glabel status -s`. Nil leaves labels unresolved.
	provider func(name string) (string, error)
}

// resolve returns the name iostat gives the disk under a leaf.
func (r iostatDiskResolver) resolve(leaf string) (string, error) {
	if disk, ok := iostatDiskOf(r.os, leaf); ok {
		return disk, nil
	}
	if r.provider == nil {
		return "", fmt.Errorf("%w: %q names no disk of %s by itself", errNoDevice, leaf, r.os)
	}
	p, err := r.provider(leaf)
	if err != nil {
		return "", err
	}
	if disk, ok := iostatDiskOf(r.os, p); ok {
		return disk, nil
	}
	return "", fmt.Errorf("%w: %q is on %q, which names no disk", errNoDevice, leaf, p)
}

// iostatPseudoDevicePrefixes name iostat rows that are no physical disk:
// illumos loopback files and RAM disks, FreeBSD memory disks, SCSI
// pass-through and optical drives. They are reported only when they back
// a vdev.
var iostatPseudoDevicePrefixes = []string{"lofi", "ramdisk", "md", "pass", "cd"}

// isIostatPseudoDevice tells iostat rows that are no disk: those above,
// NFS mounts ("server:/export") and, on illumos, pools, which iostat
// lists among the devices.
func isIostatPseudoDevice(name string, pools map[string]bool) bool {
	if pools[name] || strings.Contains(name, ":") {
		return true
	}
	for _, p := range iostatPseudoDevicePrefixes {
		if rest, ok := strings.CutPrefix(name, p); ok && allDigits(rest) {
			return true
		}
	}
	return false
}
