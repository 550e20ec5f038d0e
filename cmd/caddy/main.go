// Command caddy is the Eurekagate gateway: Caddy with its standard modules
// and the Eureka modules (the eureka app, the eureka_server and
// eureka_gateway handlers, the eureka upstream source and the
// eureka_round_robin and eureka_least_requests selection policies).
//
//	go run ./cmd/caddy run --config Caddyfile
package main

import (
	_ "time/tzdata"

	caddycmd "github.com/caddyserver/caddy/v2/cmd"
	_ "github.com/caddyserver/caddy/v2/modules/standard"

	_ "github.com/eurekagate/eurekagate/caddymodule"
)

func main() { caddycmd.Main() }
