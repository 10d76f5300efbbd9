// Package events reads the events of the ZFS kernel module as `zpool
// events -v` prints them, whole or followed (-f), with or without -H: for
// each event its class, its number (eid), its time, and the pool and vdev
// it names; and the events the kernel dropped before a reader got them.
//
// The kernel keeps a bounded queue of events (zfs_zevent_len_max) and
// drops the oldest when it is full. Every reader has its own cursor, so
// reading does not take events from zed. Each event's eid is one more
// than the one before it: a reader that knows the last eid it counted
// counts every later event once, across restarts of zpool or of the
// exporter.
//
// The payload is an nvlist printed one pair a line, eight spaces in;
// embedded nvlists go deeper and are skipped. Strings are printed between
// quotes and not escaped, numbers in hex. A string holding a newline goes
// on over lines that match no pair: they are passed over. Output that is
// no event at all gives a parse error (package parse) naming its line.
//
// OpenZFS on Linux and FreeBSD have events; zfs-fuse, illumos and Oracle
// Solaris (which report faults through FMA) have no `zpool events`.
package events
