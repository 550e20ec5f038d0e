package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// docFlag is one flag as the server's page documents it, or as the code
// defines it: its name, its default (flag.Flag.DefValue) and its usage.
type docFlag struct {
	name, def, usage string
}

// codeFlags returns the flags as parseOptions builds them, in the order -h
// lists them (by name), from the usage text parseOptions writes for -h.
// -h prints each flag's name, its type, its usage and, unless the default
// is its type's zero value, " (default X)"; the default is read back from
// there, and is the zero value of the flag's type when there is none.
func codeFlags(t *testing.T) []docFlag {
	t.Helper()
	var usage bytes.Buffer
	_, err := parseOptions([]string{"-h"}, noEnv, &usage)
	if !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("parseOptions(-h): %v, want flag.ErrHelp", err)
	}
	header := regexp.MustCompile(`^  -(\S+)(?: (\S+))?$`)
	var out []docFlag
	var kinds []string
	for _, line := range strings.Split(usage.String(), "\n") {
		if m := header.FindStringSubmatch(line); m != nil {
			out = append(out, docFlag{name: m[1]})
			kinds = append(kinds, m[2])
			continue
		}
		text, ok := strings.CutPrefix(line, "    \t")
		if !ok || len(out) == 0 {
			continue
		}
		f := &out[len(out)-1]
		if f.usage != "" {
			f.usage += "\n"
		}
		f.usage += text
	}
	if len(out) == 0 {
		t.Fatalf("no flag in the usage text:\n%s", usage.String())
	}
	zero := map[string]string{"": "false", "string": "", "duration": "0s", "int": "0", "uint": "0", "float": "0"}
	for n := range out {
		f := &out[n]
		f.def = zero[kinds[n]]
		i := strings.LastIndex(f.usage, " (default ")
		if i < 0 || !strings.HasSuffix(f.usage, ")") {
			continue
		}
		v := f.usage[i+len(" (default ") : len(f.usage)-1]
		if def, ok := parseDefault(kinds[n], v); ok {
			f.def, f.usage = def, f.usage[:i]
		}
	}
	return out
}

// parseDefault reads back a default as -h prints it for a flag of the
// given type (strings quoted); ok is false when v is not a value of that
// type, so that a usage text that itself ends in "(default ...)" is kept.
func parseDefault(kind, v string) (string, bool) {
	var err error
	switch kind {
	case "string":
		v, err = strconv.Unquote(v)
	case "duration":
		_, err = time.ParseDuration(v)
	case "int":
		_, err = strconv.ParseInt(v, 10, 64)
	case "uint":
		_, err = strconv.ParseUint(v, 10, 64)
	case "float":
		_, err = strconv.ParseFloat(v, 64)
	case "":
		_, err = strconv.ParseBool(v)
	default:
		return v, true
	}
	return v, err == nil
}

// docEscape writes text for a markdown table cell; docUnescape reads it
// back.
var (
	docEscape   = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", "|", `\|`, "\n", " ")
	docUnescape = strings.NewReplacer("&amp;", "&", "&lt;", "<", "&gt;", ">", `\|`, "|")
)

// row writes f as a row of the page's table.
func (f docFlag) row() string {
	def := ""
	if f.def != "" {
		def = "`" + f.def + "`"
	}
	return "| `-" + f.name + "` | " + def + " | " + docEscape.Replace(f.usage) + " |"
}

// pageFlags returns the rows of docs/server.md's tables whose first cell
// is a flag, by name.
func pageFlags(t *testing.T) map[string]docFlag {
	t.Helper()
	page, err := os.ReadFile("../../docs/server.md")
	if err != nil {
		t.Fatal(err)
	}
	rowRE := regexp.MustCompile("^\\| `-([a-z0-9-]+)` \\|(.*)$")
	cells := regexp.MustCompile(`((?:[^|\\]|\\.)*)\|`)
	out := map[string]docFlag{}
	for _, line := range strings.Split(string(page), "\n") {
		m := rowRE.FindStringSubmatch(strings.TrimSpace(line))
		if m == nil {
			continue
		}
		var c []string
		for _, cm := range cells.FindAllStringSubmatch(m[2], -1) {
			c = append(c, strings.TrimSpace(cm[1]))
		}
		if len(c) != 2 {
			t.Errorf("docs/server.md: the row of -%s has %d cells after the flag, want 2 (default, meaning): %s", m[1], len(c), line)
			continue
		}
		if _, dup := out[m[1]]; dup {
			t.Errorf("docs/server.md: -%s has two rows", m[1])
		}
		out[m[1]] = docFlag{name: m[1], def: strings.Trim(c[0], "`"), usage: docUnescape.Replace(c[1])}
	}
	return out
}

// The standalone server's page has a row for every flag, with the
// default and the usage text the code gives it, and no row for a flag
// the code does not have. On failure the table as it should read is
// printed, to paste over the page's.
func TestFlagsTableMatchesCode(t *testing.T) {
	code := codeFlags(t)
	page := pageFlags(t)
	var table strings.Builder
	table.WriteString("| flag | default | meaning |\n|---|---|---|\n")
	bad := false
	for _, f := range code {
		table.WriteString(f.row() + "\n")
		got, ok := page[f.name]
		switch {
		case !ok:
			t.Errorf("docs/server.md: no row for -%s", f.name)
			bad = true
		case got.def != f.def:
			t.Errorf("docs/server.md: -%s defaults to %q in the table, %q in the code", f.name, got.def, f.def)
			bad = true
		case got.usage != strings.ReplaceAll(f.usage, "\n", " "):
			t.Errorf("docs/server.md: -%s means %q in the table, %q in the code", f.name, got.usage, f.usage)
			bad = true
		}
		delete(page, f.name)
	}
	for name := range page {
		t.Errorf("docs/server.md: a row for -%s, which the code does not have", name)
		bad = true
	}
	if bad {
		// Unindented, on stdout, to paste over the page's table.
		t.Log("docs/server.md's table of flags should read as printed below")
		fmt.Printf("\n%s\n", table.String())
	}
}
