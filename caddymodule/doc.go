// Package caddymodule adds Eurekagate to Caddy:
//
//   - eureka: the app (global option eureka), a Eureka-compatible
//     registry hosted in the Caddy process, or a client of remote Eureka
//     servers;
//   - http.handlers.eureka_server: the Eureka REST API, and /health;
//   - http.handlers.eureka_gateway: routing /<app>/... to an UP instance
//     of the app;
//   - http.handlers.eureka_dashboard: the registry's web dashboard;
//   - http.reverse_proxy.upstreams.eureka: an application's instances as
//     reverse_proxy upstreams (dynamic eureka <app>);
//   - http.reverse_proxy.selection_policies.eureka_round_robin and
//     eureka_least_requests: per-application selection policies;
//   - admin.api.eureka: a read-only GET /eureka/ on the admin API.
//
// Importing the package (or the module's root package, as xcaddy does)
// registers them.
package caddymodule
