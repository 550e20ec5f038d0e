// Package readmecheck holds the tests that the documentation (README.md
// and every page under docs/) works as written: every Go program
// compiles, passes go vet and runs, doing what the text around it says,
// against a registry the test starts; every Caddyfile adapts; every JSON
// block parses; every shell block is valid shell whose go run and go test
// commands name packages, cmd/eureka flags and eurekabench subcommands
// that exist; the xcaddy command builds a Caddy with our modules; every
// relative link leads to a page and heading that exist; and the walks
// (the README's tour, the canary release, the one-machine cluster, the
// mutual-TLS cluster, the two regions) run as written, their outputs
// compared with the pages', on loopback, within bounded time.
// walk_test.go describes the walks' markup.
package readmecheck
