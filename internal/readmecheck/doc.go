// Package readmecheck holds the tests that the README's instructions work
// as written: the xcaddy command builds a Caddy with our modules, every Go
// snippet compiles and passes go vet, and every Caddyfile snippet adapts.
package readmecheck
