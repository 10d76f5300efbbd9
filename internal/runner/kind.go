package runner

import (
	"errors"
	"strings"
)

// answeredNo tells a probe that ran and said no from one that did not
// answer.
func answeredNo(err error) bool {
	var e *Error
	return errors.Is(err, ErrNoCapture) || errors.As(err, &e) && e.ExitCode > 0
}

// CommandKind names a command line for the exporter's own metrics, short
// and the same on every host: the program, its subcommand and the option
// that picks the form of its output ("zpool status -j", "zpool iostat -w",
// "zpool get all-vdevs", "zfs list -j -t snapshot"), without pool names or
// property lists. Programs other than zpool and zfs are named alone.
func CommandKind(program string, args []string) string {
	if program != "zpool" && program != "zfs" || len(args) == 0 || strings.HasPrefix(args[0], "-") {
		return program
	}
	sub := args[0]
	var flags string // the letters of the short options, up to "--"
	typ := ""        // the value of -t
	for i := 1; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			break
		}
		if strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") {
			flags += a[1:]
			if a == "-t" && i+1 < len(args) {
				typ = args[i+1]
			}
		}
	}
	has := func(letters string) string {
		if i := strings.IndexAny(flags, letters); i >= 0 {
			return " -" + flags[i:i+1]
		}
		return ""
	}
	kind := program + " " + sub
	switch {
	case program == "zfs":
		if strings.Contains(flags, "j") {
			kind += " -j"
		}
		if typ == "snapshot" {
			kind += " -t snapshot"
		}
	case sub == "status":
		// JSON before exact: "-j --json-int" is the JSON form.
		if strings.Contains(flags, "j") {
			kind += " -j"
		} else {
			kind += has("p")
		}
	case sub == "iostat":
		if form := has("wqrl"); form != "" {
			kind += form
		} else {
			kind += has("v")
		}
	case sub == "list":
		kind += has("v")
	case sub == "get":
		last := args[len(args)-1]
		switch {
		case last == "all-vdevs":
			kind += " all-vdevs"
		case strings.Contains(" "+strings.Join(args, " ")+" ", " all "):
			kind += " all"
		}
	}
	return kind
}
