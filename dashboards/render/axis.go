package render

import (
	"math"
	"time"
)

// valueTicks chooses about n round tick values covering [lo, hi]. Byte
// units get steps in powers of 1024 and durations steps of whole
// minutes, hours or days, so their labels read round (512 MiB, 1h).
func valueTicks(lo, hi float64, n int, unit string) []float64 {
	if !(hi > lo) || n < 1 {
		return []float64{lo}
	}
	raw := (hi - lo) / float64(n)
	var step float64
	switch unit {
	case "bytes", "binBps":
		step = niceStep(raw, 1024)
	case "s", "dtdurations":
		step = durationStep(raw)
	default:
		step = niceStep(raw, 1000)
	}
	var ticks []float64
	first := math.Ceil(lo/step - 1e-9)
	for i := 0.0; i <= float64(4*n); i++ {
		v := (first + i) * step
		if v > hi+step*1e-9 {
			break
		}
		ticks = append(ticks, cleanZero(v))
	}
	return ticks
}

func cleanZero(v float64) float64 {
	if math.Abs(v) < 1e-12 {
		return 0
	}
	return v
}

// niceStep rounds raw up to 1, 2, 2.5 or 5 times a power of ten; past
// base it counts in multiples of base's powers, so that a scaled unit
// gets round steps, and binary units step by powers of two above 100.
func niceStep(raw, base float64) float64 {
	scale := 1.0
	for raw/scale >= base {
		scale *= base
	}
	r := raw / scale
	if base == 1024 && r > 100 {
		// 128, 256, 512 or 1024 of a binary unit rather than 200 or 1000.
		return math.Pow(2, math.Ceil(math.Log2(r)-1e-9)) * scale
	}
	mag := math.Pow(10, math.Floor(math.Log10(r)))
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if m*mag >= r*(1-1e-9) {
			return m * mag * scale
		}
	}
	return 10 * mag * scale
}

// durationSteps are the steps of a duration axis beyond one minute.
var durationSteps = []float64{60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400, 172800, 604800}

func durationStep(raw float64) float64 {
	if raw < 45 {
		return niceStep(raw, 1000)
	}
	for _, s := range durationSteps {
		if s >= raw {
			return s
		}
	}
	return niceStep(raw/86400, 1000) * 86400
}

// timeStepChoices are the spacings of time axis ticks.
var timeStepChoices = []time.Duration{
	time.Second, 2 * time.Second, 5 * time.Second, 10 * time.Second, 15 * time.Second, 30 * time.Second,
	time.Minute, 2 * time.Minute, 5 * time.Minute, 10 * time.Minute, 15 * time.Minute, 30 * time.Minute,
	time.Hour, 2 * time.Hour, 3 * time.Hour, 6 * time.Hour, 12 * time.Hour,
	24 * time.Hour, 48 * time.Hour, 7 * 24 * time.Hour,
}

// timeTicks chooses at most n ticks over [from, to] on round UTC times,
// with the layout their labels are written in.
func timeTicks(from, to time.Time, n int) ([]time.Time, string) {
	span := to.Sub(from)
	step := timeStepChoices[len(timeStepChoices)-1]
	for _, s := range timeStepChoices {
		if span/s <= time.Duration(max(n, 1)) {
			step = s
			break
		}
	}
	layout := "15:04"
	switch {
	case step < time.Minute:
		layout = "15:04:05"
	case step >= 24*time.Hour:
		layout = "01-02"
	}
	var ticks []time.Time
	for t := from.UTC().Truncate(step); !t.After(to); t = t.Add(step) {
		if !t.Before(from) {
			ticks = append(ticks, t)
		}
	}
	return ticks, layout
}
