package main

import (
	"cmp"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
)

// "eurekabench report" renders a table of docs/performance.md from the
// records that studies wrote with -json, so that the table is the run's
// and not a copy by hand:
//
//	go run ./cmd/eurekabench million -instances 100000 -duration 15s -json million.json
//	go run ./cmd/eurekabench report -table million -json million.json
//
// Each record is a column (headed by its commit); the rows are the
// table's.

// table is one of docs/performance.md's tables: the study whose records
// it renders and its rows.
type table struct {
	study string
	rows  []tableRow
}

// tableRow is a row: its label, read from the first record, its cell
// for each record, and its target ("" for none).
type tableRow struct {
	label  func(f figures) string
	cell   func(f figures) string
	target string
}

// tables are the tables report renders, by name.
var tables = map[string]table{"million": millionTable}

// reportCommand is "eurekabench report".
func reportCommand(fs *flag.FlagSet) func(io.Writer, *record) error {
	var files []string
	fs.Func("json", "a record written by a study's -json; once for each record, a column each", func(path string) error {
		files = append(files, path)
		return nil
	})
	name := fs.String("table", "", "the table to render: "+strings.Join(tableNames(), ", "))
	return func(out io.Writer, _ *record) error {
		t, ok := tables[*name]
		switch {
		case !ok:
			return fmt.Errorf("-table %q: not one of %s", *name, strings.Join(tableNames(), ", "))
		case len(files) == 0:
			return errors.New("-json: no record given")
		}
		var recs []*record
		for _, path := range files {
			rec, err := loadRecord(path)
			if err != nil {
				return err
			}
			if rec.Study != t.study {
				return fmt.Errorf("%s: a record of %s, not of %s", path, rec.Study, t.study)
			}
			recs = append(recs, rec)
		}
		return t.render(out, recs)
	}
}

func tableNames() []string {
	var names []string
	for name := range tables {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// render writes the table in markdown, a column per record. A figure a
// record lacks is an error that names it: the table would be wrong.
func (t table) render(out io.Writer, recs []*record) (err error) {
	defer func() {
		switch e := recover().(type) {
		case nil:
		case missingFigure:
			err = e
		default:
			panic(e)
		}
	}()
	var b strings.Builder
	b.WriteString("| |")
	for k, r := range recs {
		b.WriteString(" " + cmp.Or(r.Commit, fmt.Sprintf("run %d", k+1)) + " |")
	}
	b.WriteString(" target |\n|---|" + strings.Repeat("---|", len(recs)) + "---|\n")
	for _, row := range t.rows {
		b.WriteString("| " + row.label(figures{recs[0]}) + " |")
		for _, r := range recs {
			b.WriteString(" " + row.cell(figures{r}) + " |")
		}
		if row.target != "" {
			b.WriteString(" " + row.target)
		}
		b.WriteString(" |\n")
	}
	_, err = io.WriteString(out, b.String())
	return err
}

// figures reads a record's figures for a table's cells.
type figures struct{ rec *record }

// missingFigure is the panic of get for a figure the record lacks, which
// render turns into its error.
type missingFigure struct{ name, study, date string }

func (m missingFigure) Error() string {
	return fmt.Sprintf("the record of %s of %s has no figure %q", m.study, m.date, m.name)
}

// get is the figure name.
func (f figures) get(name string) float64 {
	v, ok := f.rec.figure(name)
	if !ok {
		panic(missingFigure{name, f.rec.Study, f.rec.Date})
	}
	return v
}

// count is the figure name as a whole number with thousands separators.
func (f figures) count(name string) string { return commas(int(f.get(name))) }

// ms is the figure name, in ms, to a tenth (to the unit from 100 on).
func (f figures) ms(name string) string {
	v := f.get(name)
	if v >= 100 {
		return commas(int(v + 0.5))
	}
	return fmt.Sprintf("%.1f", v)
}
