package caddymodule

import (
	"os"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/dustin/go-humanize"

	"github.com/eurekagate/eurekagate/registry"
	"github.com/eurekagate/eurekagate/registry/httpapi"
	"github.com/eurekagate/eurekagate/routing"
)

// jsonOptions returns the JSON names of a module's options, in the
// order of its struct's fields.
func jsonOptions(v any) []string {
	var out []string
	typ := reflect.TypeOf(v).Elem()
	for n := range typ.NumField() {
		f := typ.Field(n)
		if f.Anonymous && f.Type.Kind() == reflect.Struct {
			out = append(out, jsonOptions(reflect.New(f.Type).Interface())...) // flattened into the JSON
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if f.IsExported() && name != "" && name != "-" {
			out = append(out, name)
		}
	}
	return out
}

// optionRows returns the rows of the table that follows the marker
// <!-- options: module --> on docs/caddy.md: the cells of each, by the
// option in its first cell (in backquotes).
func optionRows(t *testing.T, page, module string) map[string][]string {
	t.Helper()
	_, after, ok := strings.Cut(page, "<!-- options: "+module+" -->\n")
	if !ok {
		t.Fatalf("docs/caddy.md: no <!-- options: %s --> marker before the table of %s's options", module, module)
	}
	cells := regexp.MustCompile(`((?:[^|\\]|\\.)*)\|`)
	out := map[string][]string{}
	started := false
	for _, line := range strings.Split(after, "\n") {
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, "|") {
			if started || line != "" {
				break
			}
			continue
		}
		started = true
		var c []string
		for _, m := range cells.FindAllStringSubmatch(line[1:], -1) {
			c = append(c, strings.TrimSpace(m[1]))
		}
		if len(c) == 0 || !strings.HasPrefix(c[0], "`") {
			continue // the header and its rule
		}
		name := strings.Trim(c[0], "`")
		if _, dup := out[name]; dup {
			t.Errorf("docs/caddy.md: %s's option %s has two rows", module, name)
		}
		out[name] = c
	}
	return out
}

// firstCode returns a cell's first code span ("" if none).
func firstCode(cell string) string {
	_, after, ok := strings.Cut(cell, "`")
	if !ok {
		return ""
	}
	code, _, _ := strings.Cut(after, "`")
	return code
}

// The Caddy page's tables of the eureka app's and eureka_gateway's
// options have a row for each JSON option of App and Gateway (and none
// for an option they do not have), with four cells (option, Caddyfile,
// default, meaning); the defaults the code defines are the ones the
// table gives: the durations as durationDefaults renders them, and the
// numbers and the body size from their exported defaults.
func TestOptionsTablesMatchCode(t *testing.T) {
	data, err := os.ReadFile("../docs/caddy.md")
	if err != nil {
		t.Fatal(err)
	}
	page := string(data)
	numbers := map[string]string{
		"renewal_percent_threshold": strconv.FormatFloat(registry.DefaultRenewalPercentThreshold, 'f', -1, 64),
		"lb_retries":                strconv.Itoa(routing.DefaultRetries),
		"max_fails":                 strconv.Itoa(routing.DefaultMaxFails),
		"rules_max_bytes":           strconv.Itoa(routing.DefaultRulesMaxBytes),
		"rules_max_rules":           strconv.Itoa(routing.DefaultRulesMaxRules),
		"rules_max_regex_size":      strconv.Itoa(routing.DefaultRulesMaxRegexSize),
		"rules_max_echo":            strconv.Itoa(routing.DefaultRulesMaxEcho),
	}
	seen := map[string]bool{}
	for _, m := range []struct {
		module string
		opts   []string
	}{
		{"eureka", jsonOptions(new(App))},
		{"eureka_gateway", jsonOptions(new(Gateway))},
	} {
		rows := optionRows(t, page, m.module)
		for _, name := range m.opts {
			row, ok := rows[name]
			if !ok {
				t.Errorf("docs/caddy.md: no row for %s's option %s; add one such as\n| `%s` | `%s <value>` | | what it does |", m.module, name, name, name)
				continue
			}
			delete(rows, name)
			if len(row) != 4 {
				t.Errorf("docs/caddy.md: %s's option %s has %d cells, want 4 (option, Caddyfile, default, meaning)", m.module, name, len(row))
				continue
			}
			def := firstCode(row[2])
			if want, ok := durationDefaults[name]; ok {
				seen[name] = true
				if def != want {
					t.Errorf("docs/caddy.md: %s defaults to %q in the table, %q in the code (durationDefaults)", name, def, want)
				}
			}
			if want, ok := numbers[name]; ok && def != want {
				t.Errorf("docs/caddy.md: %s defaults to %q in the table, %s in the code", name, def, want)
			}
			if name == "max_body_size" {
				if n, err := humanize.ParseBytes(def); err != nil || n != httpapi.DefaultMaxBodyBytes {
					t.Errorf("docs/caddy.md: max_body_size defaults to %q in the table, %d bytes in the code", def, httpapi.DefaultMaxBodyBytes)
				}
			}
		}
		for name := range rows {
			t.Errorf("docs/caddy.md: a row for %s's option %s, which %s does not have", m.module, name, m.module)
		}
	}
	for name := range durationDefaults {
		if !seen[name] {
			t.Errorf("durationDefaults has %s, which no table row of the eureka app or eureka_gateway checks", name)
		}
	}
}
