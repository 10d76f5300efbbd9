package main

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"time"
)

// manPage turns the output of kingpin's --help-man into a man page that man
// and lintian read cleanly. kingpin writes the whole of --version's output,
// several lines, after .TH, where they become text before the first
// section; and its NAME section holds the name alone, without the
// "name \- summary" line that whatis and apropos read.
func manPage(kingpin []byte, name, summary, version string, date time.Time) ([]byte, error) {
	if !bytes.HasPrefix(kingpin, []byte(".TH ")) {
		return nil, errors.New("no .TH line first: not kingpin's man page")
	}
	const nameSection = "\n.SH \"NAME\"\n"
	i := bytes.Index(kingpin, []byte(nameSection))
	if i < 0 {
		return nil, errors.New(`no .SH "NAME" section`)
	}
	rest := kingpin[i+len(nameSection):]
	line, body, _ := bytes.Cut(rest, []byte("\n"))
	if string(line) != name {
		return nil, fmt.Errorf("NAME section %q, want %q", line, name)
	}
	var out bytes.Buffer
	fmt.Fprintf(&out, ".TH %s 1 %s %s \"User Commands\"\n", quoteArg(strings.ToUpper(name)), date.Format("2006-01-02"), quoteArg(name+" "+version))
	fmt.Fprintf(&out, ".SH \"NAME\"\n%s \\- %s\n", name, summary)
	out.Write(body)
	return out.Bytes(), nil
}

// quoteArg quotes a macro argument for troff, which ends one at a space.
func quoteArg(s string) string {
	return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
}
