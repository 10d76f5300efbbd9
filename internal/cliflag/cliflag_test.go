package cliflag

import (
	"testing"
	"time"

	"github.com/alecthomas/kingpin/v2"
)

func TestParseNamesTheFlag(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--timeout=10"}, "--timeout=10: not a duration: give a number and a unit, such as 10s, 1m30s or 2h"},
		{[]string{"--count=ten"}, "--count=ten: not a number"},
		{[]string{"--count=1e400"}, "--count=1e400: out of range"},
		{[]string{"--timeout=1s", "--count", "x y"}, `--count="x y": not a number`},
		{[]string{"--dry-run=yes"}, "--dry-run=yes: a switch takes no value: give --dry-run or --no-dry-run"},
		{[]string{"--no-dry-run=1"}, "--no-dry-run=1: a switch takes no value: give --dry-run or --no-dry-run"},
		// kingpin's own errors already name the flag: kept.
		{[]string{"--nope"}, "unknown long flag '--nope'"},
		{[]string{"--count"}, "expected argument for flag '--count'"},
	} {
		app := kingpin.New("t", "")
		var d time.Duration
		var n int
		var b bool
		app.Flag("timeout", "").DurationVar(&d)
		app.Flag("count", "").IntVar(&n)
		app.Flag("dry-run", "").BoolVar(&b)
		_, err := Parse(app, c.args)
		if err == nil || err.Error() != c.want {
			t.Errorf("%q: error %v, want %q", c.args, err, c.want)
		}
	}
	app := kingpin.New("t", "")
	var d time.Duration
	app.Flag("timeout", "").DurationVar(&d)
	if _, err := Parse(app, []string{"--timeout=2s"}); err != nil || d != 2*time.Second {
		t.Errorf("good value: %v, %v", err, d)
	}
}
