// Package eurekagate is the module's root, for Caddy builds: importing it
// registers Eurekagate's Caddy modules (those of package caddymodule: the
// eureka app, the eureka_server, eureka_gateway and eureka_dashboard
// handlers, the eureka upstream source, the eureka_round_robin and
// eureka_least_requests selection policies and the admin.api.eureka
// route), so that
//
//	xcaddy build --with github.com/eurekagate/eurekagate
//
// builds Caddy with them, as cmd/caddy is built. It has no API of its own:
// Go programs import the packages under it (registry, discovery, balancer,
// fxmodules, ...).
package eurekagate

import (
	// Registers the Caddy modules, directives and global option.
	_ "github.com/eurekagate/eurekagate/caddymodule"
)
