//go:build !illumos && !solaris

package collector

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"

	"github.com/shirou/gopsutil/v4/common"
	"github.com/shirou/gopsutil/v4/cpu"
)

// defaultHostCPU reads the host's CPU times with gopsutil: /proc/stat
// under ProcRoot on Linux, the kern.cp_time sysctl on FreeBSD.
func defaultHostCPU(cfg Config) hostCPUFunc {
	env := common.EnvMap{common.HostProcEnvKey: cfg.ProcRoot}
	stat := filepath.Join(cfg.ProcRoot, "stat")
	return func(ctx context.Context) (map[string]float64, error) {
		times, err := cpu.TimesWithContext(context.WithValue(ctx, common.EnvKey, env), false)
		if err != nil {
			return nil, err
		}
		// gopsutil answers an unreadable /proc/stat with no times at all.
		// A replay directory without a proc tree has none to give.
		if len(times) == 0 {
			if _, err := os.Stat(stat); runtime.GOOS == "linux" && errors.Is(err, fs.ErrNotExist) {
				return nil, nil
			}
			return nil, errors.New("no CPU times")
		}
		return cpuModes(times[0], runtime.GOOS), nil
	}
}

// cpuModes names the modes the host's kernel counts. Linux's guest and
// guest_nice are left out: its user and nice already include them.
func cpuModes(t cpu.TimesStat, goos string) map[string]float64 {
	modes := map[string]float64{
		"user":   t.User,
		"nice":   t.Nice,
		"system": t.System,
		"idle":   t.Idle,
	}
	switch goos {
	case "linux":
		modes["iowait"] = t.Iowait
		modes["irq"] = t.Irq
		modes["softirq"] = t.Softirq
		modes["steal"] = t.Steal
	case "freebsd":
		modes["irq"] = t.Irq // kern.cp_time's intr
	}
	return modes
}
