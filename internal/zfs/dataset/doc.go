// Package dataset reads what the zfs command prints about datasets: the
// scripted list of `zfs list -H -o PROPERTIES` and the rows of `zfs get
// -H -o name,property,value`, into the same List.
//
// It is a parser only: which command runs, and with which properties,
// is the client's choice (package zfs), as the capabilities of the zfs at
// hand allow. Output it cannot read gives a parse error (package parse)
// naming its line; a failed read is returned as the reader's error.
package dataset
