// Package readmecheck holds a test that the README's snippets work: every
// Go snippet compiles and passes go vet, every Caddyfile snippet adapts.
package readmecheck
