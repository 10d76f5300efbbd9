//go:build illumos || solaris

package collector

// defaultHostCPU integrates the CPU block of the disk collector's
// `iostat -xnc` stream on illumos and Solaris: gopsutil is no option here,
// as it runs the kstat command itself, outside the runner. The stream is
// started even when the disk collector is disabled.
func defaultHostCPU(cfg SourceConfig) hostCPUFunc {
	if cfg.DiskSampler == nil {
		return nil // --once, or the stream turned off
	}
	cfg.DiskSampler.Need()
	return hostCPUFrom(cfg.DiskSampler)
}
