package openzfs

import (
	"bufio"
	"strings"
)

// failure is a test of the walk that failed, with the last lines it
// printed: the host's log ends with why, where CI shows only the end.
type failure struct {
	name  string // without "TestWalk/"
	lines []string
}

// failureLines is how many of a failed test's lines its failure keeps.
const failureLines = 12

// walkFailures reads the walk's go test -v output. It returns the tests
// that failed, in the order they ended, and whether the walk as a whole
// passed. A line belongs to the test the last "=== RUN", "=== CONT" or
// "=== NAME" header named.
func walkFailures(log string) (failed []failure, passed bool) {
	printed := map[string][]string{}
	current := ""
	sc := bufio.NewScanner(strings.NewReader(log))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		trimmed := strings.TrimSpace(line)
		if header, ok := strings.CutPrefix(trimmed, "=== "); ok {
			verb, name, _ := strings.Cut(header, " ")
			if verb == "RUN" || verb == "CONT" || verb == "NAME" {
				current = strings.TrimPrefix(strings.TrimSpace(name), "TestWalk/")
			}
			continue
		}
		if result, ok := strings.CutPrefix(trimmed, "--- FAIL: TestWalk/"); ok {
			name, _, _ := strings.Cut(result, " (")
			failed = append(failed, failure{name: name, lines: printed[name]})
			continue
		}
		if strings.HasPrefix(trimmed, "--- ") {
			continue
		}
		if trimmed == "PASS" {
			passed = true
			continue
		}
		if trimmed != "" {
			lines := append(printed[current], line)
			if len(lines) > failureLines {
				lines = lines[1:]
			}
			printed[current] = lines
		}
	}
	return failed, passed
}
