package iostat

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/zpool-exporter/zpool_exporter/internal/parse"
)

const (
	kib = 1024
	mib = 1024 * 1024
	// sysstat prints rsec/s and wsec/s in 512-byte sectors without -k or -m.
	sector = 512
)

var (
	same = unit{mult: 1}
	// Every tool prints times in milliseconds.
	milliseconds = unit{shift: 3}
	percent      = unit{shift: 2}
)

// unit converts a printed value to the unit of a Device field: it
// multiplies by mult, or moves the decimal point shift places left.
type unit struct {
	mult  float64
	shift int
}

func times(n float64) unit { return unit{mult: n} }

// convert parses a printed value in unit u. Moving the decimal point in the
// text rather than dividing keeps 4.2 ms at 0.0042 s, not
// 0.004200000000000001.
func (u unit) convert(s string) (float64, error) {
	v, err := parseValue(s)
	if err != nil || u.shift == 0 {
		return v * u.mult, err
	}
	text := strings.Replace(s, ",", ".", 1)
	if !strings.ContainsAny(text, "eEpPxX_") {
		if shifted, err := strconv.ParseFloat(text+"e-"+strconv.Itoa(u.shift), 64); err == nil {
			return shifted, nil
		}
	}
	return v / math.Pow10(u.shift), nil
}

// setter stores one printed value into a device.
type setter func(d *Device, s string) error

func rate(field func(*Device) *float64, u unit) setter {
	return func(d *Device, s string) error {
		v, err := u.convert(s)
		*field(d) = v
		return err
	}
}

func optional(field func(*Device) **float64, u unit) setter {
	return func(d *Device, s string) error {
		v, err := u.convert(s)
		*field(d) = &v
		return err
	}
}

func errorCount(field func(*DeviceErrors) *uint64) setter {
	return func(d *Device, s string) error {
		v, err := parseValue(s)
		if err != nil {
			return err
		}
		if v < 0 || v != math.Trunc(v) || v > math.MaxUint32 {
			return fmt.Errorf("error count %v is not a whole number", v)
		}
		if d.Errors == nil {
			d.Errors = &DeviceErrors{}
		}
		*field(d.Errors) = uint64(v)
		return nil
	}
}

var (
	readOps    = func(d *Device) *float64 { return &d.ReadOps }
	writeOps   = func(d *Device) *float64 { return &d.WriteOps }
	readBytes  = func(d *Device) *float64 { return &d.ReadBytes }
	writeBytes = func(d *Device) *float64 { return &d.WriteBytes }
	await      = func(d *Device) **float64 { return &d.AwaitSeconds }
	readAwait  = func(d *Device) **float64 { return &d.ReadAwaitSeconds }
	writeAwait = func(d *Device) **float64 { return &d.WriteAwaitSeconds }
	queue      = func(d *Device) **float64 { return &d.QueueLength }
	busy       = func(d *Device) **float64 { return &d.BusyRatio }
)

// deviceColumns maps the header names of every platform to Device fields.
var deviceColumns = map[string]setter{
	"r/s": rate(readOps, same),
	"w/s": rate(writeOps, same),

	"kr/s":   rate(readBytes, times(kib)), // illumos, FreeBSD
	"kw/s":   rate(writeBytes, times(kib)),
	"Mr/s":   rate(readBytes, times(mib)), // illumos -M
	"Mw/s":   rate(writeBytes, times(mib)),
	"rkB/s":  rate(readBytes, times(kib)), // sysstat
	"wkB/s":  rate(writeBytes, times(kib)),
	"rMB/s":  rate(readBytes, times(mib)), // sysstat -m
	"wMB/s":  rate(writeBytes, times(mib)),
	"rsec/s": rate(readBytes, times(sector)), // sysstat without -k or -m
	"wsec/s": rate(writeBytes, times(sector)),
	// The illumos man page example prints "kw" for "kw/s".
	"kr": rate(readBytes, times(kib)),
	"kw": rate(writeBytes, times(kib)),

	"wait":   optional(func(d *Device) **float64 { return &d.Wait }, same),
	"actv":   optional(func(d *Device) **float64 { return &d.Actv }, same),
	"wsvc_t": optional(func(d *Device) **float64 { return &d.WaitSvcSeconds }, milliseconds),
	"asvc_t": optional(func(d *Device) **float64 { return &d.ActvSvcSeconds }, milliseconds),
	"svc_t":  optional(await, milliseconds),
	"%w":     optional(func(d *Device) **float64 { return &d.WaitRatio }, percent),
	"%b":     optional(busy, percent),

	"await":   optional(await, milliseconds), // sysstat before 11.6
	"r_await": optional(readAwait, milliseconds),
	"w_await": optional(writeAwait, milliseconds),
	"ms/t":    optional(await, milliseconds), // FreeBSD
	"ms/r":    optional(readAwait, milliseconds),
	"ms/w":    optional(writeAwait, milliseconds),

	"aqu-sz":   optional(queue, same),
	"avgqu-sz": optional(queue, same),
	"qlen":     optional(queue, same),
	"%util":    optional(busy, percent),

	"s/w": errorCount(func(e *DeviceErrors) *uint64 { return &e.Soft }),
	"h/w": errorCount(func(e *DeviceErrors) *uint64 { return &e.Hard }),
	"trn": errorCount(func(e *DeviceErrors) *uint64 { return &e.Transport }),
	"tot": errorCount(func(e *DeviceErrors) *uint64 { return &e.Total }),
}

// sideColumns are the tty and CPU columns: printed in a block of their own,
// or to the right of the device header with figures on the first device
// row only (illumos -x without -n, FreeBSD -x -T).
var sideColumns = map[string]bool{
	"tin": true, "tout": true,
	"us": true, "sy": true, "wt": true, "dt": true, "id": true, "ni": true, "in": true,
}

// table is a parsed device header.
type table struct {
	names   []string // device columns, in order
	setters []setter // nil for the name column and for Extra columns
	name    int      // index of the device name column
	side    []string // tty and CPU columns after the device columns
}

func newTable(fields []string) (*table, error) {
	t := &table{name: -1}
	var hasReads, hasWrites bool
	for i, f := range fields {
		if sideColumns[f] && isSideSuffix(fields[i:]) {
			t.side = fields[i:]
			break
		}
		switch f {
		case "device", "Device", "Device:":
			if t.name >= 0 {
				return nil, fmt.Errorf("device header names the device column twice")
			}
			t.name = i
		case "r/s":
			hasReads = true
		case "w/s":
			hasWrites = true
		}
		t.names = append(t.names, f)
		t.setters = append(t.setters, deviceColumns[f])
	}
	if !hasReads || !hasWrites || t.name < 0 {
		return nil, fmt.Errorf("%w: device header %q has no r/s and w/s columns", ErrNotExtended, parse.Clip(strings.Join(fields, " ")))
	}
	return t, nil
}

func isSideSuffix(fields []string) bool {
	for _, f := range fields {
		if !sideColumns[f] {
			return false
		}
	}
	return true
}

// parseRow reads one device row. The first row of a report may carry the
// side (tty and CPU) figures, returned as a CPU when there are any.
func (t *table) parseRow(fields []string, first bool) (Device, *CPU, error) {
	n := len(t.names)
	switch {
	case len(fields) == n:
	case first && len(t.side) > 0 && len(fields) == n+len(t.side):
	default:
		return Device{}, nil, fmt.Errorf("device row has %d fields, the header has %d columns", len(fields), n)
	}
	d := Device{Name: fields[t.name]}
	for i, name := range t.names {
		if i == t.name {
			continue
		}
		if _, err := parseValue(fields[i]); err != nil {
			return Device{}, nil, fmt.Errorf("device %s: cannot parse %s %q", d.Name, name, fields[i])
		}
		if set := t.setters[i]; set != nil {
			if err := set(&d, fields[i]); err != nil {
				return Device{}, nil, fmt.Errorf("device %s: %s: %w", d.Name, name, err)
			}
			continue
		}
		v, _ := parseValue(fields[i])
		if d.Extra == nil {
			d.Extra = make(map[string]float64)
		}
		d.Extra[name] = v
	}
	if len(fields) == n {
		return d, nil, nil
	}
	cpu, err := parseCPU(t.side, fields[n:])
	if err != nil {
		return Device{}, nil, err
	}
	return d, cpu, nil
}

// parseCPU reads CPU figures printed as percentages under the given
// column names (illumos "us sy wt id", FreeBSD "us ni sy in id", sysstat
// "%user %nice %system %iowait %steal %idle"). The tty columns tin and tout
// are skipped. It returns nil when no CPU column is present.
func parseCPU(names, values []string) (*CPU, error) {
	var cpu CPU
	found := false
	for i, name := range names {
		if name == "tin" || name == "tout" {
			continue
		}
		v, err := parseValue(values[i])
		if err != nil {
			return nil, fmt.Errorf("cannot parse CPU %s %q", name, values[i])
		}
		found = true
		ratio, _ := percent.convert(values[i])
		switch name {
		case "us", "%user":
			cpu.User = ratio
		case "sy", "%system":
			cpu.System = ratio
		case "id", "%idle":
			cpu.Idle = ratio
		case "ni", "%nice":
			cpu.Nice = &ratio
		case "wt", "%iowait":
			cpu.IOWait = &ratio
		case "%steal":
			cpu.Steal = &ratio
		case "in":
			cpu.Interrupt = &ratio
		case "dt":
			cpu.DTrace = &ratio
		default:
			if cpu.Extra == nil {
				cpu.Extra = make(map[string]float64)
			}
			cpu.Extra[name] = v
		}
	}
	if !found {
		return nil, nil
	}
	return &cpu, nil
}

// parseValue reads a printed number. sysstat follows LC_NUMERIC, so a
// decimal comma is accepted too. NaN and infinities are rejected.
func parseValue(s string) (float64, error) {
	v, err := strconv.ParseFloat(s, 64)
	if err != nil && strings.Count(s, ",") == 1 && !strings.Contains(s, ".") {
		v, err = strconv.ParseFloat(strings.Replace(s, ",", ".", 1), 64)
	}
	if err != nil {
		return 0, err
	}
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("%q is not a finite number", s)
	}
	return v, nil
}
