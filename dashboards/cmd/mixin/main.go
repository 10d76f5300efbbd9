// Command mixin writes the generated dashboards and rules into
// dashboards/out, and the same files into the Helm chart's files/
// directory: `go run ./cmd/mixin` from dashboards/.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/zpool-exporter/zpool_exporter/dashboards/boards"
	"github.com/zpool-exporter/zpool_exporter/dashboards/config"
	"github.com/zpool-exporter/zpool_exporter/dashboards/rules"
)

func main() {
	out := flag.String("out", "out", "directory to write dashboards/ and rules/ into")
	// The chart ships its own copy because Helm reads only files inside
	// the chart's directory (.Files.Get), so it cannot point at out/.
	chart := flag.String("chart", "../deploy/helm/zpool-exporter/files", "the Helm chart's files/ directory to write the same dashboards/ and rules/ into; empty to skip")
	cfg := config.Default()
	flag.StringVar(&cfg.Selector, "selector", cfg.Selector, "the label matchers by which the rules pick the exporter's series: the job that scrapes it")
	flag.Parse()
	dirs := []string{*out}
	if *chart != "" {
		dirs = append(dirs, *chart)
	}
	for _, dir := range dirs {
		if err := write(dir, cfg); err != nil {
			fmt.Fprintln(os.Stderr, "mixin:", err)
			os.Exit(1)
		}
	}
}

func write(out string, cfg config.Config) error {
	for dir, build := range map[string]func(config.Config) (map[string][]byte, error){
		"dashboards": boards.Files,
		"rules":      rules.Files,
	} {
		files, err := build(cfg)
		if err != nil {
			return fmt.Errorf("%s: %w", dir, err)
		}
		if err := os.MkdirAll(filepath.Join(out, dir), 0o755); err != nil {
			return err
		}
		for name, data := range files {
			if err := os.WriteFile(filepath.Join(out, dir, name), data, 0o644); err != nil {
				return err
			}
		}
	}
	return nil
}
