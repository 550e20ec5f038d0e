// Package readmecheck holds the tests that the README's instructions work
// as written: the xcaddy command builds a Caddy with our modules, every Go
// snippet compiles, passes go vet and runs, doing what the text around it
// says, against a registry the test starts, and every Caddyfile snippet
// adapts.
package readmecheck
