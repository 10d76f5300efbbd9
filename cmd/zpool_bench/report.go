package main

import (
	"fmt"
	"os"
	"text/tabwriter"

	"github.com/alecthomas/kingpin/v2"

	"github.com/zpool-exporter/zpool_exporter/internal/zpoolbench/benchreport"
)

// reportCommand is `zpool_bench report`: a saved run again, in any format.
type reportCommand struct {
	env     env
	runsDir string
	format  string
	svg     string
	ref     string
}

func (c *reportCommand) register(app *kingpin.Application) {
	cmd := app.Command("report", "Print a saved run's report again, in another format or with its chart.")
	cmd.Flag("runs.dir", "Where runs are saved.").Default("zpool-bench-runs").StringVar(&c.runsDir)
	cmd.Flag("format", "table, markdown, csv or json.").Default("table").EnumVar(&c.format, formats...)
	cmd.Flag("svg", "Also write the chart of the pool's bandwidth over the run to this file.").PlaceHolder("FILE").StringVar(&c.svg)
	cmd.Arg("run", "A saved run: its JSON file, its window ID or its name.").Required().StringVar(&c.ref)
}

func (c *reportCommand) run() int {
	r, err := loadRun(c.runsDir, c.ref)
	if err != nil {
		warnf(c.env.stderr, "%v", err)
		return exitFailure
	}
	if err := reportWriters[c.format](c.env.stdout, r); err != nil {
		warnf(c.env.stderr, "%v", err)
		return exitFailure
	}
	if c.svg != "" {
		if err := writeFile(c.svg, func(f *os.File) error { return benchreport.WriteSVG(f, r) }); err != nil {
			warnf(c.env.stderr, "%v", err)
			return exitFailure
		}
	}
	return 0
}

// compareCommand is `zpool_bench compare`.
type compareCommand struct {
	env     env
	runsDir string
	format  string
	svg     string
	refs    []string
}

func (c *compareCommand) register(app *kingpin.Application) {
	cmd := app.Command("compare", "Put saved runs side by side, with each figure's ratio to the first run's (e.g. ashift=12 against ashift=9).")
	cmd.Flag("runs.dir", "Where runs are saved.").Default("zpool-bench-runs").StringVar(&c.runsDir)
	cmd.Flag("format", "table, markdown, csv or json.").Default("table").EnumVar(&c.format, formats...)
	cmd.Flag("svg", "Also write a chart of the runs' pool bandwidth, aligned at their start, to this file.").PlaceHolder("FILE").StringVar(&c.svg)
	cmd.Arg("runs", "Two or more saved runs: JSON files, window IDs or names. The first is the baseline.").Required().StringsVar(&c.refs)
}

func (c *compareCommand) run() int {
	if len(c.refs) < 2 {
		warnf(c.env.stderr, "compare needs two runs or more; try --help")
		return exitUsage
	}
	var reports []benchreport.Report
	for _, ref := range c.refs {
		r, err := loadRun(c.runsDir, ref)
		if err != nil {
			warnf(c.env.stderr, "%v", err)
			return exitFailure
		}
		reports = append(reports, r)
	}
	cmp := benchreport.Compare(reports)
	if err := comparisonWriters[c.format](c.env.stdout, cmp); err != nil {
		warnf(c.env.stderr, "%v", err)
		return exitFailure
	}
	if c.svg != "" {
		if err := writeFile(c.svg, func(f *os.File) error { return benchreport.WriteComparisonSVG(f, cmp) }); err != nil {
			warnf(c.env.stderr, "%v", err)
			return exitFailure
		}
	}
	return 0
}

func writeFile(path string, write func(*os.File) error) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := write(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// listCommand is `zpool_bench list`.
type listCommand struct {
	env     env
	runsDir string
}

func (c *listCommand) register(app *kingpin.Application) {
	cmd := app.Command("list", "List the saved runs, newest first, with what report and compare take to name them.")
	cmd.Flag("runs.dir", "Where runs are saved.").Default("zpool-bench-runs").StringVar(&c.runsDir)
}

func (c *listCommand) run() int {
	runs, err := savedRuns(c.runsDir)
	if err != nil {
		warnf(c.env.stderr, "%v", err)
		return exitFailure
	}
	tw := tabwriter.NewWriter(c.env.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "START (UTC)\tID\tNAME\tPOOL\tLAYOUT\tDURATION\tWRITE MB/s\tREAD MB/s\tEXIT")
	for _, r := range runs {
		run, layout := r.report.Run, ""
		if run.Config != nil {
			layout = run.Config.Layout
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d\n", run.Start.UTC().Format("2006-01-02 15:04:05"), run.ID, run.Name, run.Pool,
			layout, benchreport.FormatSeconds(r.report.DurationSeconds), benchreport.AverageMB(r.report.Pool.WriteBytes), benchreport.AverageMB(r.report.Pool.ReadBytes), run.ExitStatus)
	}
	if err := tw.Flush(); err != nil {
		warnf(c.env.stderr, "%v", err)
		return exitFailure
	}
	return 0
}
