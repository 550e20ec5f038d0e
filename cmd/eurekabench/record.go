package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"time"

	"github.com/eurekagate/eurekagate/internal/version"
)

// record is a study's results as data, written with -json FILE (every
// command takes it) beside the table the study prints: what ran, where
// and when, each phase as the one meter read it (phase.go), and the
// study's figures by name. eurekabench report renders docs/performance.md's
// tables from records.
type record struct {
	Study   string        `json:"study"` // the command; "summary" without one
	Args    []string      `json:"args"`  // its flags as given
	Commit  string        `json:"commit,omitempty"`
	Version string        `json:"version"` // the module's, as the binary reports it
	Date    string        `json:"date"`    // the start, RFC 3339, UTC
	Machine machine       `json:"machine"`
	Phases  []phaseResult `json:"phases,omitempty"`
	Figures []figure      `json:"figures,omitempty"`
	// Table is the table the study printed, row by row, for the studies
	// whose figures are their rows' text (push, scale).
	Table []reportRow `json:"table,omitempty"`
}

// reportRow is a row of a study's printed table.
type reportRow struct {
	Measurement string `json:"measurement"`
	Result      string `json:"result"`
	Target      string `json:"target,omitempty"`
}

// machine is where a record was made.
type machine struct {
	CPUs       int    `json:"cpus"`
	GOMAXPROCS int    `json:"gomaxprocs"`
	Go         string `json:"go"`
	OS         string `json:"os"`
	Arch       string `json:"arch"`
	Load       string `json:"load_average"` // over the last minute, at the start
}

// figure is one result of a study: a rate, a time, a size, a count.
type figure struct {
	Name  string  `json:"name"`
	Value float64 `json:"value"`
	Unit  string  `json:"unit,omitempty"`
}

// newRecord starts the record of study run with args.
func newRecord(study string, args []string) *record {
	return &record{
		Study: study, Args: append([]string{}, args...), Version: version.String(),
		Date: time.Now().UTC().Format(time.RFC3339),
		Machine: machine{CPUs: runtime.NumCPU(), GOMAXPROCS: runtime.GOMAXPROCS(0), Go: runtime.Version(),
			OS: runtime.GOOS, Arch: runtime.GOARCH, Load: loadAverage()},
	}
}

// add sets the figure name; a second add of a name replaces the first.
func (r *record) add(name string, value float64, unit string) {
	for k := range r.Figures {
		if r.Figures[k].Name == name {
			r.Figures[k] = figure{name, value, unit}
			return
		}
	}
	r.Figures = append(r.Figures, figure{name, value, unit})
}

// row prints a row of the study's table with format and keeps it in the
// record; the header row (measurement, result, target) is printed only.
func (r *record) row(out io.Writer, format, name, result, target string) {
	fmt.Fprintf(out, format, name, result, target)
	if name != "measurement" {
		r.Table = append(r.Table, reportRow{name, result, target})
	}
}

// figure returns the figure name.
func (r *record) figure(name string) (float64, bool) {
	for _, f := range r.Figures {
		if f.Name == name {
			return f.Value, true
		}
	}
	return 0, false
}

// writeTo writes the record, indented, to path, or to stdout when path
// is "-"; the commit is read now, so that a run without -json (a child
// server among them) does not run git.
func (r *record) writeTo(path string, stdout io.Writer) error {
	r.Commit = gitCommit()
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	b = append(b, '\n')
	if path == "-" {
		_, err = stdout.Write(b)
		return err
	}
	return os.WriteFile(path, b, 0o644)
}

// loadRecord reads a record that write wrote.
func loadRecord(path string) (*record, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var r record
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	if r.Study == "" {
		return nil, fmt.Errorf("%s: not a record of eurekabench (no study)", path)
	}
	return &r, nil
}

// gitCommit is the commit of the working tree the study runs in, short;
// "" outside one (go run does not stamp the binary with it).
func gitCommit() string {
	out, err := exec.Command("git", "rev-parse", "--short", "HEAD").Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}
