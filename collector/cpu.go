package collector

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	iofs "io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/zpool-exporter/zpool_exporter/internal/zfs"
)

func init() {
	register("cpu", cpuCollectorDefault(runtime.GOOS),
		"Host CPU seconds by mode, and CPU seconds of the ZFS engine (kernel threads, zpool-POOL processes, the zfs-fuse daemon) by thread family", newCPUCollector)
}

// cpuCollectorDefault tells on which systems the cpu collector runs unless
// told otherwise: those whose ZFS threads it can find.
func cpuCollectorDefault(goos string) bool {
	switch goos {
	case "linux", "freebsd", "illumos", "solaris":
		return true
	}
	return false
}

var (
	hostCPUDesc = desc("host", "cpu_seconds_total",
		"Seconds the host's CPUs spent in each mode, summed over all CPUs: since boot from /proc/stat (Linux) or kern.cp_time (FreeBSD), since the exporter started where iostat's CPU figures are integrated (illumos, Solaris). Linux counts the time of virtual machine guests within user and nice, so there is no guest mode.",
		"mode")
	engineCPUDesc = desc("engine", "cpu_seconds_total",
		"CPU seconds spent by the ZFS engine's threads, by family and mode. The family is the thread name without its instance number (z_wr_iss compresses and checksums writes, z_rd_int verifies and decompresses reads, txg_sync writes out transaction groups), zpool-POOL for all I/O threads of a pool on illumos and Solaris, zfs-fuse for the whole daemon. Threads that exit (SPL starts and ends taskq threads as load changes) keep the time they were last seen with. Kernel threads run in system mode only; zfs-fuse has user time too.",
		"family", "mode")
)

// engineThread is the CPU time of one ZFS thread, or of a process that
// runs ZFS.
type engineThread struct {
	// ID tells the thread from any other while it runs: PID and start
	// time on Linux, the thread or process ID elsewhere.
	ID           string
	Family       string
	User, System time.Duration // only a user-space process (zfs-fuse) has user time
	// UserSpace is true for a process that runs ZFS in user space, whose
	// user time is reported as a series of its own.
	UserSpace bool
}

// engineFamily is the CPU time of one family of ZFS threads.
type engineFamily struct {
	Name         string
	User, System time.Duration
	UserSpace    bool
}

// hostCPUFunc returns the host's CPU seconds by lowercase mode. No modes
// and no error means the source has nothing yet.
type hostCPUFunc func(context.Context) (map[string]float64, error)

// engineCPUFunc returns the ZFS threads running now.
type engineCPUFunc func(context.Context) ([]engineThread, error)

type cpuCollector struct {
	hostCPU   hostCPUFunc   // nil where the host's CPU times cannot be read
	engineCPU engineCPUFunc // nil where ZFS threads cannot be found
	totals    engineTotals
}

func newCPUCollector(cfg Config, _ *slog.Logger) (Collector, error) {
	c := &cpuCollector{hostCPU: defaultHostCPU(cfg)}
	switch cfg.CPUOS {
	case "linux":
		c.engineCPU = procfsEngineCPU(cfg.ProcRoot)
	case "freebsd":
		c.engineCPU = psEngineCPU(cfg.Runner, freebsdThreadsArgs, parseFreeBSDThreads, freebsdEngineThreads)
	case "illumos", "solaris":
		c.hostCPU = iostatHostCPU(cfg)
		c.engineCPU = psEngineCPU(cfg.Runner, sunosProcessesArgs, parseSunOSProcesses, sunosEngineThreads)
	}
	return c, nil
}

// iostatHostCPU integrates the CPU block of the disk collector's
// `iostat -xnc` stream (illumos, Solaris), where gopsutil would run the
// kstat command itself, outside the runner. The stream is started even
// when the disk collector is disabled; without one (--once, or the
// interval set to 0) there are no host times.
func iostatHostCPU(cfg Config) hostCPUFunc {
	if cfg.DiskSampler == nil {
		return nil
	}
	cfg.DiskSampler.Need()
	return hostCPUFrom(cfg.DiskSampler)
}

func (c *cpuCollector) Update(ctx context.Context, _ *zfs.Scrape, ch chan<- prometheus.Metric) error {
	var errs []error
	sent := 0
	if c.hostCPU != nil {
		modes, err := c.hostCPU(ctx)
		if err != nil {
			errs = append(errs, fmt.Errorf("reading host CPU times: %w", err))
		}
		for mode, seconds := range modes {
			counter(ch, hostCPUDesc, seconds, mode)
			sent++
		}
	}
	if c.engineCPU != nil {
		threads, err := c.engineCPU(ctx)
		if err != nil {
			errs = append(errs, fmt.Errorf("reading ZFS thread CPU times: %w", err))
		} else {
			for _, f := range c.totals.update(threads) {
				counter(ch, engineCPUDesc, seconds(f.System), f.Name, "system")
				if f.UserSpace {
					counter(ch, engineCPUDesc, seconds(f.User), f.Name, "user")
				}
				sent++
			}
		}
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	if sent == 0 {
		return ErrNoData
	}
	return nil
}

// seconds converts exactly where it can: 1.14, not Duration.Seconds'
// 1.1400000000000001.
func seconds(d time.Duration) float64 { return float64(d) / float64(time.Second) }

// engineTotals keeps the families' CPU times from going down. SPL's
// dynamic taskqs start threads under load and end them when idle, and a
// thread that ends takes its time out of the sum of its family: a counter
// that drops would read as a reset, and its whole value as new work. So
// the last time seen of every thread that is gone stays in its family;
// only what it ran between that scrape and its end is lost.
type engineTotals struct {
	mu     sync.Mutex
	live   map[string]engineThread // the threads of the last read, by ID
	exited map[string]engineFamily // the time of threads that are gone, by family
}

// update takes the threads running now and returns the families' totals.
func (e *engineTotals) update(threads []engineThread) []engineFamily {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.exited == nil {
		e.exited = map[string]engineFamily{}
	}
	current := make(map[string]engineThread, len(threads))
	for _, t := range threads {
		current[t.ID] = t
	}
	for id, old := range e.live {
		t, ok := current[id]
		// A time that went back is a new thread under a reused ID.
		if !ok || t.Family != old.Family || t.User < old.User || t.System < old.System {
			f := e.exited[old.Family]
			f.Name, f.UserSpace = old.Family, f.UserSpace || old.UserSpace
			f.User += old.User
			f.System += old.System
			e.exited[old.Family] = f
		}
	}
	e.live = current
	sums := make(map[string]*engineFamily, len(e.exited))
	for name, f := range e.exited {
		sums[name] = &f
	}
	for _, t := range current {
		f := sums[t.Family]
		if f == nil {
			f = &engineFamily{Name: t.Family}
			sums[t.Family] = f
		}
		f.UserSpace = f.UserSpace || t.UserSpace
		f.User += t.User
		f.System += t.System
	}
	return sortedFamilies(sums)
}

// cpuSecondsSource is a sampler that integrates the CPU figures of a
// running `iostat -xc` into seconds by mode (illumos and Solaris).
type cpuSecondsSource interface {
	CPUSeconds() (map[string]float64, bool)
}

// hostCPUFrom reads the host's CPU times from such a sampler. Before its
// first report there is nothing to say, which is not a failure.
func hostCPUFrom(s cpuSecondsSource) hostCPUFunc {
	return func(context.Context) (map[string]float64, error) {
		modes, ok := s.CPUSeconds()
		if !ok {
			return nil, nil
		}
		return modes, nil
	}
}

// Linux reports process times in clock ticks of USER_HZ, which is 100 on
// every architecture whatever the kernel's HZ.
const linuxTick = time.Second / 100

// pfKthread is the PF_KTHREAD bit of /proc/PID/stat's flags.
const pfKthread = 0x00200000

// kthreaddPID is the parent of every kernel thread but itself.
const kthreaddPID = 2

// linuxTask is what the grouping needs from one /proc/PID/stat.
type linuxTask struct {
	PID          int
	Comm         string
	PPID         int
	Flags        uint
	UTime, STime uint   // clock ticks
	Starttime    uint64 // clock ticks after boot: with the PID, what tells a process from one that reuses its PID
}

func (t linuxTask) kernelThread() bool {
	return t.PPID == kthreaddPID || t.Flags&pfKthread != 0
}

// procfsEngineCPU reads the ZFS kernel threads and any zfs-fuse daemon
// from procfs under root. A root that does not exist (a replay directory
// without a proc tree) has nothing to report, which is no failure.
//
// Every process's stat is read at every scrape, so it is read as cheaply
// as it can be: into one buffer, with open, one read and close, and only
// the fields the grouping needs parsed. procfs's Proc.Stat took two
// reads, an epoll registration and fmt.Fscan of 42 fields, a tenth of a
// small host's scrape.
func procfsEngineCPU(root string) engineCPUFunc {
	return func(context.Context) ([]engineThread, error) {
		d, err := os.Open(root)
		if errors.Is(err, iofs.ErrNotExist) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		names, err := d.Readdirnames(-1)
		d.Close()
		if err != nil {
			return nil, err
		}
		buf := make([]byte, procStatMax)
		tasks := make([]linuxTask, 0, len(names))
		for _, name := range names {
			pid, err := strconv.Atoi(name)
			if err != nil {
				continue // not a process
			}
			data, ok := readProcStat(filepath.Join(root, name, "stat"), buf)
			if !ok {
				continue // exited between the listing and the read
			}
			if t, ok := parseLinuxTask(pid, data); ok {
				tasks = append(tasks, t)
			}
		}
		return linuxEngineThreads(tasks), nil
	}
}

// procStatMax bounds /proc/PID/stat: 52 numbers and a name of at most 64
// bytes take well under 1 KiB.
const procStatMax = 4096

// readProcStat reads a /proc/PID/stat into buf. The kernel writes the
// whole line at the first read: the read stops at its newline, where
// reading to the end takes a second.
func readProcStat(path string, buf []byte) ([]byte, bool) {
	fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, false
	}
	defer syscall.Close(fd)
	n := 0
	for n < len(buf) {
		m, err := syscall.Read(fd, buf[n:])
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return nil, false
		}
		if m == 0 {
			break
		}
		n += m
		if buf[n-1] == '\n' {
			break
		}
	}
	if n == len(buf) {
		return nil, false // longer than any stat line
	}
	return buf[:n], true
}

// procStatFields is how many fields after the name procfs's Proc.Stat
// required, whose tasks this parse keeps: every kernel since 2.6.24 has
// them.
const procStatFields = 42

// parseLinuxTask parses a /proc/PID/stat: "pid (comm) state ppid pgrp
// session tty_nr tpgid flags minflt cminflt majflt cmajflt utime stime
// cutime cstime priority nice num_threads itrealvalue starttime ...". The
// name may hold spaces and parentheses: it ends at the last ")".
func parseLinuxTask(pid int, data []byte) (linuxTask, bool) {
	i, j := bytes.IndexByte(data, '('), bytes.LastIndexByte(data, ')')
	if i < 0 || j < i {
		return linuxTask{}, false
	}
	t := linuxTask{PID: pid}
	n := 0 // fields after the name; the state is field 0
	ok := true
	for f := range bytes.FieldsSeq(data[j+1:]) {
		var v uint64
		switch n {
		case 1, 6, 11, 12, 19:
			var err error
			v, err = strconv.ParseUint(string(f), 10, 64)
			ok = ok && err == nil
		}
		switch n {
		case 1:
			t.PPID = int(v)
		case 6:
			t.Flags = uint(v)
		case 11:
			t.UTime = uint(v)
		case 12:
			t.STime = uint(v)
		case 19:
			t.Starttime = v
		}
		n++
	}
	if !ok || n < procStatFields {
		return linuxTask{}, false
	}
	t.Comm = string(data[i+1 : j])
	return t, true
}

// zfsFuseComm is the process name of the zfs-fuse daemon.
const zfsFuseComm = "zfs-fuse"

// linuxEngineThreads picks the ZFS kernel threads, and the zfs-fuse daemon
// (whose process times include all its threads). Any other process or
// kernel thread is not ZFS.
func linuxEngineThreads(tasks []linuxTask) []engineThread {
	var threads []engineThread
	for _, t := range tasks {
		user, system := time.Duration(t.UTime)*linuxTick, time.Duration(t.STime)*linuxTick
		id := strconv.Itoa(t.PID) + "/" + strconv.FormatUint(t.Starttime, 10)
		switch {
		case t.kernelThread():
			if family, ok := linuxZFSFamily(t.Comm); ok {
				// A kernel thread never runs user code; the odd tick the
				// kernel books as user time is still kernel work.
				threads = append(threads, engineThread{ID: id, Family: family, System: user + system})
			}
		case t.Comm == zfsFuseComm:
			threads = append(threads, engineThread{ID: id, Family: zfsFuseComm, User: user, System: system, UserSpace: true})
		}
	}
	return threads
}

func sortedFamilies(sums map[string]*engineFamily) []engineFamily {
	out := make([]engineFamily, 0, len(sums))
	for _, f := range sums {
		out = append(out, *f)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// linuxZFSFamilies are the OpenZFS and SPL kernel threads (0.6 to 2.3)
// whose names do not start with z_ or spl_, as /proc shows them: cut to
// 15 characters, and without the _thread that SPL drops from a thread
// function's name (txg_sync_thread runs as txg_sync).
var linuxZFSFamilies = map[string]bool{
	"arc_adapt":       true, // 0.6
	"arc_evict":       true,
	"arc_prune":       true,
	"arc_reap":        true,
	"arc_reclaim":     true, // 0.7
	"arc_user_evicts": true, // 0.6.5
	"dbu_evict":       true,
	"dbuf_evict":      true,
	"dp_sync_taskq":   true,
	"dp_zil_clean_ta": true, // dp_zil_clean_taskq
	"dsl_scan_iss":    true,
	"l2arc_feed":      true,
	"l2arc_dev_rebui": true, // l2arc_dev_rebuild
	"metaslab_group":  true, // metaslab_group_taskq cut to metaslab_group_ (up to 2.1)
	"mmp":             true,
	"raidz_expand":    true, // 2.3
	"receive_writer":  true,
	"send_merge":      true,
	"send_reader":     true,
	"send_traverse":   true,
	"spa_async":       true,
	"txg_quiesce":     true,
	"txg_sync":        true,
	"vdev_autotrim":   true,
	"vdev_initialize": true,
	"vdev_open":       true,
	"vdev_rebuild":    true,
	"vdev_trim":       true,
	"vdev_validate":   true,
	"zil_clean":       true, // 0.6
	"zthr_procedure":  true, // 0.8 to 2.0, before zthrs had names
	"zvol":            true, // up to 2.1
	"zvol_tq":         true, // 2.2+, zvol_tq-N
}

// linuxZFSFamily returns the family of a kernel thread, and whether it is
// a ZFS or SPL thread at all. Taskqs of the z_ and spl_ families are
// recognised by prefix, so that new ones need no change here.
func linuxZFSFamily(comm string) (string, bool) {
	family := threadFamily(comm)
	switch {
	case family == "":
		return "", false
	case strings.HasPrefix(family, "z_"), strings.HasPrefix(family, "spl_"), linuxZFSFamilies[family]:
		return family, true
	}
	return "", false
}

// threadFamily is a thread's name without what tells instances apart: the
// words after the first space (FreeBSD's "solthread 0xfffff800...",
// "zvol gpt/data") and trailing numbers joined by _, - or / (z_wr_int_0,
// zvol_tq-0, z_wr_iss/3 of early SPL, z_wr_int_0_1 of FreeBSD taskqueues
// with several threads), and a separator the name was cut after
// (metaslab_group_ for metaslab_group_taskq on Linux).
func threadFamily(name string) string {
	name = strings.TrimSpace(name)
	if i := strings.IndexFunc(name, unicode.IsSpace); i >= 0 {
		name = name[:i]
	}
	for {
		name = strings.TrimRight(name, "_-/")
		i := strings.LastIndexAny(name, "_-/")
		if i < 0 || !allDigits(name[i+1:]) {
			return name
		}
		name = name[:i]
	}
}
