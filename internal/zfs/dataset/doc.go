// Package dataset reads what the zfs command prints about datasets: the
// scripted list of `zfs list -H -o PROPERTIES` and the rows of `zfs get
// -H -o name,property,value`, into the same List.
//
// It is a parser only: which command runs, and with which properties,
// is the client's choice (package zfs), as the capabilities of the zfs at
// hand allow.
package dataset
