// Package packages checks the .deb and .rpm that make dist builds
// (packaging/) with the tools that read them: lintian, dpkg-deb and dpkg
// installing into a throwaway root, rpm querying and installing into one,
// and the maintainer scripts run as on a host where systemd runs, with
// every systemctl call recorded. It has tests only.
package packages
