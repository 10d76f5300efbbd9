// Package iostat parses the extended output of the operating system's own
// iostat, the tool people read beside `zpool iostat` when they benchmark
// ZFS:
//
//   - illumos and Solaris `iostat -x` with any of -n, -c, -t, -M, -z, -p,
//     -C, -X, -Y, -e and -T d|u;
//   - FreeBSD `iostat -x` (devstat), with or without -C, -T and -z;
//   - Linux sysstat `iostat -x` from version 9 to 12, with -k, -m, -t,
//     -p and -N.
//
// Columns are found by their header names, never by position, so kB/s
// versus MB/s, descriptive (-n) versus instance names, optional error
// columns and every sysstat layout work with the same code. Columns the
// package does not know are kept in Device.Extra under their header name.
//
// Units: rates are per second, sizes are bytes, times are seconds (the
// tools print milliseconds) and percentages are ratios between 0 and 1.
//
// Reports. All three tools print one report per interval; the first one
// covers the time since boot. ParseIostat returns them all; a Scanner
// yields each as soon as it is complete, for a long-running
// `iostat -x INTERVAL`. How the end of a report is seen:
//
//   - Linux sysstat ends every report with a blank line, so a report is
//     yielded as soon as it is printed.
//   - illumos, Solaris and FreeBSD print no end marker. A report is
//     complete when the first line of the next one arrives (its
//     timestamp, CPU block, "extended device statistics" title or column
//     header, each of which both print before every report), or at the
//     end of the input. A blank line after device rows also ends a
//     report. A stream is therefore yielded one interval late.
//
// illumos and Solaris also start from boot again after a disk, NFS mount
// or processor came or went, and say so in "<<disk added: c1t1d0>>"
// notices before that report: Report.StateChanges holds them.
//
// Not supported, with an error that says so: the plain (non -x) layouts,
// -I (counts per interval instead of rates), -r (comma-separated),
// sysstat -h (values with unit suffixes) and JSON output. `iostat -E`
// prints a different, per-device error summary: ParseErrorSummary reads
// it, and ParseIostat rejects it with ErrNotExtended.
//
// The parsers are pure: they read an io.Reader and return typed values,
// with no exec, no files and no metrics. Output they cannot read, the
// unsupported forms included, gives a parse error (package parse) naming
// its line; a failed read is returned as it is.
package iostat
