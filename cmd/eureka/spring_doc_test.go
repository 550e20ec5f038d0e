package main

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// here is what a Spring property does here, as docs/spring.md's table
// has it.
func (p springProperty) here() string {
	switch {
	case p.ignored != "":
		return "ignored: " + p.ignored
	case p.flag != "":
		switch p.unit {
		case millis:
			return "`-" + p.flag + "`, in milliseconds"
		case seconds:
			return "`-" + p.flag + "`, in seconds"
		}
		return "`-" + p.flag + "`"
	}
	return p.does
}

// docs/spring.md's table of properties is the catalogue's, row for row.
// On failure the table as it should read is printed, to paste over the
// page's.
func TestSpringTableMatchesCode(t *testing.T) {
	page, err := os.ReadFile("../../docs/spring.md")
	if err != nil {
		t.Fatal(err)
	}
	var want strings.Builder
	want.WriteString("| property | here |\n|---|---|\n")
	for _, p := range springProperties {
		fmt.Fprintf(&want, "| `%s` | %s |\n", p.name, docEscape.Replace(p.here()))
	}
	if !strings.Contains(string(page), want.String()) {
		t.Error("docs/spring.md's table of properties is not the code's")
		fmt.Printf("\n%s\n", want.String())
	}
}
