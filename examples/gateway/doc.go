// Package gateway holds the example gateway configuration (Caddyfile) and
// its test. See README.md.
package gateway
