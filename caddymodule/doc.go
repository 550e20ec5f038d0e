// Package caddymodule adds Eurekagate to Caddy: the eureka app (a
// Eureka-compatible registry hosted in the Caddy process, or a client of
// remote Eureka servers), the eureka_server handler (the Eureka REST API),
// the eureka_gateway handler (routing /<app>/... to an UP instance of the
// app), the eureka upstream source and the eureka_round_robin and
// eureka_least_requests selection policies for reverse_proxy, and a
// read-only /eureka/ route on the admin API.
package caddymodule
