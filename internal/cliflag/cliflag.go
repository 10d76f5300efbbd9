// Package cliflag parses a command line with kingpin and names the flag
// of a value that was refused, which kingpin leaves out: it passes on the
// value's own error ("time: missing unit in duration") as it is.
package cliflag

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/alecthomas/kingpin/v2"
)

// Parse parses args as app.Parse does and returns the command chosen.
// When a flag's value is refused, the error names the flag and the value
// given.
func Parse(app *kingpin.Application, args []string) (command string, err error) {
	command, err = app.Parse(args)
	if err == nil {
		return command, nil
	}
	return "", name(app, args, err)
}

// name names the flag of a parse error where kingpin did not.
func name(app *kingpin.Application, args []string, err error) error {
	ctx, cerr := app.ParseContext(args)
	if cerr != nil || ctx == nil {
		if named := boolGivenValue(app, args); named != nil {
			return named
		}
		return err
	}
	// kingpin sets the values in the order given and stops at the first
	// refusal: setting them again in that order finds it. Nothing runs
	// after a failed parse, so setting a value twice does no harm.
	for _, el := range ctx.Elements {
		f, ok := el.Clause.(*kingpin.FlagClause)
		if !ok || el.Value == nil {
			continue
		}
		m := f.Model()
		if serr := m.Value.Set(*el.Value); serr != nil && serr.Error() == err.Error() {
			return Invalid(m.Name, *el.Value, describe(serr))
		}
	}
	return err
}

// describe says what is wrong with a value in words a reader of --help
// knows, where the parser's own error names its internals.
func describe(err error) string {
	var num *strconv.NumError
	switch {
	case errors.As(err, &num) && errors.Is(num.Err, strconv.ErrRange):
		return "out of range"
	case errors.As(err, &num):
		return "not a number"
	case strings.HasPrefix(err.Error(), "time: "):
		return "not a duration: give a number and a unit, such as 10s, 1m30s or 2h"
	}
	return err.Error()
}

// boolGivenValue names a switch given a value (--once=true), which kingpin
// refuses as an unexpected argument without naming the flag.
func boolGivenValue(app *kingpin.Application, args []string) error {
	bools := map[string]bool{}
	for _, f := range app.Model().Flags {
		if f.IsBoolFlag() {
			bools[f.Name] = true
		}
	}
	for _, a := range args {
		if a == "--" {
			break
		}
		name, value, ok := strings.Cut(strings.TrimPrefix(a, "--"), "=")
		if !ok || !strings.HasPrefix(a, "--") {
			continue
		}
		if bools[name] || bools[strings.TrimPrefix(name, "no-")] {
			flag := strings.TrimPrefix(name, "no-")
			return Invalid(name, value, fmt.Sprintf("a switch takes no value: give --%s or --no-%s", flag, flag))
		}
	}
	return nil
}

// Invalid is the error of a flag given a value it cannot take: it names
// the flag, the value and what is wrong, in one line.
func Invalid(flag, value, why string) error {
	return fmt.Errorf("--%s=%s: %s", flag, quoteIfNeeded(value), why)
}

// quoteIfNeeded quotes a value that would not read back as one word.
func quoteIfNeeded(v string) string {
	if v == "" || strings.ContainsAny(v, " \t\n\"'`\\") {
		return fmt.Sprintf("%q", v)
	}
	return v
}
