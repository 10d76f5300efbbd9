package parse_test

import (
	"errors"
	"fmt"

	"github.com/zpool-exporter/zpool_exporter/internal/parse"
)

// A parser gives the line and why; the caller that ran the command names
// it; whoever gets the error tells it from a failed run.
func Example() {
	err := parse.Errorf(7, "unexpected line %q", "x1") // in the parser
	err = parse.WithSource(err, "zpool status -p")     // in its caller
	fmt.Println(err)
	fmt.Println(errors.Is(err, parse.ErrUnexpected))
	// Output:
	// zpool status -p: line 7: unexpected line "x1"
	// true
}
