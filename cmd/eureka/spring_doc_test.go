package main

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/eurekagate/eurekagate/internal/springeureka"
)

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
	for _, p := range springeureka.Properties {
		fmt.Fprintf(&want, "| `%s` | %s |\n", p.Name, docEscape.Replace(p.Here()))
	}
	if !strings.Contains(string(page), want.String()) {
		t.Error("docs/spring.md's table of properties is not the code's")
		fmt.Printf("\n%s\n", want.String())
	}
}
