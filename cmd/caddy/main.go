// Command caddy is the Eurekagate gateway: Caddy with its standard modules
// and the Eureka modules (the eureka app, the eureka_server,
// eureka_gateway and eureka_dashboard handlers, the eureka upstream source,
// the eureka_round_robin and eureka_least_requests selection policies, and
// the admin.api.eureka route of the admin API). It is the binary that
// xcaddy build --with github.com/eurekagate/eurekagate makes.
//
//	go run ./cmd/caddy run --config Caddyfile
//
// The first run compiles Caddy, which takes a few minutes.
package main

import (
	_ "time/tzdata"

	caddycmd "github.com/caddyserver/caddy/v2/cmd"
	_ "github.com/caddyserver/caddy/v2/modules/standard"

	"github.com/eurekagate/eurekagate/caddymodule"
)

func main() {
	// A processor spare, as cmd/eureka runs its gateway, and a heap floor
	// (the eureka app's spare_processor and heap_floor; GOMAXPROCS and
	// GOGC in the environment are kept).
	caddymodule.BinaryDefaults()
	caddycmd.Main()
}
