// Package workload parses the summaries that storage benchmark tools print,
// so that the tool's own figures can be shown beside what ZFS saw during
// the same run:
//
//   - dd: GNU coreutils ("N bytes (X GB, Y GiB) copied, S s, R MB/s", the
//     older "N bytes (X GB) copied" and "N bytes copied", and the
//     "seconds" of coreutils before 8), BusyBox ("N bytes (9.9MB) copied,
//     S seconds, 844.4MB/s") and BSD ("N bytes transferred in S secs (R
//     bytes/sec)");
//   - fio: the 3.x text report (per-job "write: IOPS=..., BW=...(io/runtime)"
//     lines with their latency lines and "clat percentiles" blocks, and
//     the "Run status group" summary lines "WRITE: bw=..., io=...,
//     run=..."), the 2.x report ("write: io=..., bw=..., iops=...,
//     runt=..." and "WRITE: io=..., aggrb=..."), and the 3.x JSON report
//     (--output-format=json or json+: jobs[].read, .write and .trim, with
//     clat_ns and lat_ns and their percentiles);
//   - bonnie++: the text report and the CSV line of 1.0x, 1.96/1.97 and
//     1.98 to 2.00a (human-readable k/m/g units, '+++++' for tests too
//     fast to measure, blank cells for tests not run);
//   - dbench: the "Throughput N MB/sec [(sync open)] [(sync dirs)] N
//     clients N procs max_latency=N ms" line of 4.x, the 3.x "Throughput
//     N MB/sec N procs" line, and the 4.x operation table;
//   - filebench: "IO Summary:" lines of 1.5 ("N ops N ops/s N/N rd/wr N
//     mb/s N ms/op") and of 1.4 ("N ops, N ops/s, (N/N r/w), N mb/s, N us
//     cpu/op, N ms latency"), and the per-flowop lines before them.
//
// Tools are named by the command that runs them (dd, fio, bonnie++, dbench,
// filebench): ToolFor maps a command to its tool, Parse runs its parser,
// Detect recognises a tool from its output.
//
// Units: every figure is in base units. Bytes are bytes, rates are per
// second, times are seconds. Each tool's units are read as the tool means
// them:
//
//   - GNU dd prints rates with SI prefixes ("885 MB/s" is 885e6 bytes/s);
//     its IEC sizes ("3.8 GiB") are binary. BusyBox dd's "MB" is binary.
//   - fio 3.x prints both: "MiB/s" is binary, "MB/s" is SI; IOPS suffixes
//     ("14.3k") are SI. fio 2.x printed "KB" and "MB" for binary units (its
//     default kb_base of 1024).
//   - bonnie++ rates are KiB/s: "K/sec" columns and CSV values are KiB/s,
//     and the k/m/g suffixes of 1.98 and later are KiB, MiB and GiB.
//   - dbench's "MB/sec" is 10^6 bytes per second.
//   - filebench's "mb/s" is 2^20 bytes per second.
//
// A figure the tool did not print is nil, never zero; a printed zero is
// zero. Nothing is computed from other figures: a result holds what the
// tool printed, converted.
//
// Several reports in one output (dd after SIGUSR1 or SIGINFO, fio with
// --status-interval, two filebench runs, bonnie++ -x) are numbered by
// Result.Run; Summary.Final gives the results of the last one, and the
// headline is the last report's.
//
// Input that has no summary at all (an interrupted dbench, dd
// status=none, a fio that failed before running) gives an error wrapping
// ErrNoSummary that says what is missing, never a zero result. A line
// that looks like a summary but cannot be read gives an error naming the
// line.
//
// The parsers are pure: they read an io.Reader and return typed values,
// with no exec, no files and no metrics.
package workload
