//go:build illumos || solaris

package collector

// defaultHostCPU gives nothing here: on illumos and Solaris the host's CPU
// times come from the iostat stream (iostatHostCPU), and gopsutil, which
// would run the kstat command itself, is not linked.
func defaultHostCPU(Config) hostCPUFunc { return nil }
