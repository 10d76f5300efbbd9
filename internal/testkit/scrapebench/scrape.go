package scrapebench

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Scrape is one scrape's answer.
type Scrape struct {
	Latency time.Duration // from the request to the end of the body
	Body    []byte
}

// scrape gets url as Prometheus does, gzip asked (and undone by the
// client).
func scrape(client *http.Client, url string) (Scrape, error) {
	began := time.Now()
	resp, err := client.Get(url)
	if err != nil {
		return Scrape{}, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return Scrape{}, err
	}
	if resp.StatusCode != http.StatusOK {
		return Scrape{}, fmt.Errorf("GET %s: %s: %.200s", url, resp.Status, body)
	}
	return Scrape{Latency: time.Since(began), Body: body}, nil
}

// Series counts the samples of an exposition in the text format.
func (s Scrape) Series() int {
	n := 0
	for line := range bytes.Lines(s.Body) {
		if len(bytes.TrimSpace(line)) > 0 && line[0] != '#' {
			n++
		}
	}
	return n
}

// Sum adds up the samples of a family (all its label sets); ok is false
// when it has none.
func (s Scrape) Sum(family string) (sum float64, ok bool) {
	for line := range bytes.Lines(s.Body) {
		name, rest, found := bytes.Cut(line, []byte("{"))
		if !found || string(name) != family {
			continue
		}
		i := bytes.LastIndexByte(rest, ' ')
		if v, err := strconv.ParseFloat(strings.TrimSpace(string(rest[i+1:])), 64); i >= 0 && err == nil {
			sum += v
			ok = true
		}
	}
	return sum, ok
}

// Failed lists the label values of a family's series whose value is 0,
// as zfs_exporter_collector_success gives the collectors that failed.
func (s Scrape) Failed(family string) []string {
	var failed []string
	for line := range bytes.Lines(s.Body) {
		l := strings.TrimSpace(string(line))
		if !strings.HasPrefix(l, family+"{") || !strings.HasSuffix(l, " 0") {
			continue
		}
		if _, value, ok := strings.Cut(l, `="`); ok {
			value, _, _ = strings.Cut(value, `"`)
			failed = append(failed, value)
		}
	}
	return failed
}
