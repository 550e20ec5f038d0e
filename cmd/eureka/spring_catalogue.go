package main

// unit is how a Spring property's value becomes its flag's.
type unit int

const (
	asIs    unit = iota // the value as written
	boolean             // Spring's true/false, yes/no, on/off, 1/0
	millis              // a whole number of milliseconds (the names ending in -ms)
	seconds             // a whole number of seconds (the names ending in -seconds)
	special             // read by its own code in spring.go
)

// springProperty is one Spring property this server knows: the flag it
// sets, or why it has no effect here. A name ending in ".*" is a family:
// a map's keys, or every property under it.
type springProperty struct {
	name    string // as Spring's documentation writes it
	flag    string // the flag it sets ("" when ignored or special)
	unit    unit
	ignored string // why it has no effect here
	does    string // what it does here, when it is special
}

// The reasons a known property has no effect here.
const (
	noResponseCache = "there is no read-only response cache: a read after a change sees it"
	noThreadPools   = "replication here is one sender per peer, with no thread pool"
	noAWS           = "this server binds no AWS resource (EIP, Route 53, ASG)"
	noRateLimiter   = "this server has no rate limiter"
	peerClient      = "the peers' HTTP client is not set by this property here (see -max-response-bytes, -startup-sync-timeout)"
	remoteClient    = "remote regions are read with the peers' HTTP client and -tls-ca"
	peerListOnce    = "the peer list is read once, at start"
	syncRetries     = "the start-up sync asks the peers again until -startup-sync-timeout"
	embeddedClient  = "a setting of the Java server's embedded client: this server registers with no one and its peers get its registry by replication"
	ownInstance     = "describes the Java server's own instance, which this server does not register"
	javaOnly        = "a Spring Boot setting of the Java application, which this server is not"
	noCodecChoice   = "one codec per format here"
)

// springProperties is every Spring property this server reads: the
// docs/spring.md table is checked against it.
var springProperties = []springProperty{
	{name: "server.port", unit: special, does: "the port of -addr (default 8761)"},
	{name: "server.address", unit: special, does: "the host of -addr (default every address)"},
	{name: "server.servlet.context-path", unit: special, does: "-prefix: the REST API is also served under <context-path>/eureka"},
	{name: "server.ssl.enabled", unit: special, does: "false leaves the server.ssl.* files unread (plain HTTP)"},
	{name: "server.ssl.certificate", unit: special, does: "-tls-cert, PEM"},
	{name: "server.ssl.certificate-private-key", unit: special, does: "-tls-key, PEM"},
	{name: "server.ssl.trust-certificate", unit: special, does: "-tls-client-ca with client-auth need"},
	{name: "server.ssl.key-store", unit: special, does: "refused: key stores are not read here; give the PEM certificate and key (openssl pkcs12 -in store.p12 -nodes writes them)"},
	{name: "server.ssl.key-store-type", unit: special, does: "refused with server.ssl.key-store"},
	{name: "server.ssl.key-store-password", unit: special, does: "refused with server.ssl.key-store"},
	{name: "server.ssl.key-alias", unit: special, does: "refused with server.ssl.key-store"},
	{name: "server.ssl.key-password", unit: special, does: "refused with server.ssl.key-store"},
	{name: "server.ssl.trust-store", unit: special, does: "refused: trust stores are not read here; give server.ssl.trust-certificate (PEM)"},
	{name: "server.ssl.trust-store-type", unit: special, does: "refused with server.ssl.trust-store"},
	{name: "server.ssl.trust-store-password", unit: special, does: "refused with server.ssl.trust-store"},
	{name: "server.ssl.client-auth", unit: special, does: "need: -tls-client-ca, every client presents a certificate; none: none asked for"},
	{name: "spring.security.user.name", unit: special, does: "the user of -auth-users (default user), needed on every request as with Spring Security's defaults (-auth-reads)"},
	{name: "spring.security.user.password", unit: special, does: "its password: plain, {noop}plain or {bcrypt}hash, as Spring's DelegatingPasswordEncoder writes them"},
	{name: "spring.profiles.active", unit: special, does: "the profiles whose documents and application-{profile} files apply"},
	{name: "spring.config.location", unit: special, does: "the files or directories read instead of application.* and config/application.*"},
	{name: "spring.config.additional-location", unit: special, does: "files or directories read after those"},
	{name: "spring.config.name", unit: special, does: "the files' name instead of application"},
	{name: "spring.application.name", ignored: ownInstance},
	{name: "spring.main.*", ignored: javaOnly},
	{name: "spring.jmx.*", ignored: javaOnly},
	{name: "spring.cloud.*", ignored: javaOnly},
	{name: "spring.freemarker.*", ignored: "the dashboard here is its own page, not Freemarker's"},
	{name: "spring.profiles.include", ignored: "profile groups and includes are not read here; list every profile in spring.profiles.active"},
	{name: "spring.profiles.group.*", ignored: "profile groups and includes are not read here; list every profile in spring.profiles.active"},
	{name: "spring.config.import", ignored: "imports are not read here; name the files in spring.config.location"},
	{name: "logging.*", ignored: "the log here is zap's JSON on stderr, at info"},
	{name: "info.*", ignored: "/actuator/info here shows the build alone (Spring Boot shows info.* only with management.info.env.enabled)"},

	{name: "management.endpoints.web.exposure.include", unit: special, does: "-actuator: the endpoints served (health, info, prometheus, or *); a name of an endpoint this server has not is logged and left out"},
	{name: "management.endpoints.web.exposure.exclude", unit: special, does: "the endpoints taken out of -actuator"},
	{name: "management.endpoints.web.base-path", flag: "actuator-path"},
	{name: "management.server.port", unit: special, does: "the port of -management-addr (a server of the actuator's own); -1 serves no endpoint (-actuator off)"},
	{name: "management.server.address", unit: special, does: "the host of -management-addr"},
	{name: "management.endpoint.health.show-details", flag: "actuator-health-details"},
	{name: "management.endpoint.health.probes.enabled", ignored: "the liveness and readiness groups are always on here"},
	{name: "management.*", ignored: "not an actuator setting this server has"},

	{name: "eureka.client.service-url.*", unit: special, does: "-peers: the URLs of the zones of eureka.client.availability-zones.<region> (defaultZone without one), as the Java server reads them; its own URL is recognised (-self-url, eureka.instance.hostname) and left out"},
	{name: "eureka.client.region", flag: "region"},
	{name: "eureka.client.availability-zones.*", unit: special, does: "the zones whose service-url entries are the peers, for this region"},
	{name: "eureka.client.register-with-eureka", ignored: embeddedClient},
	{name: "eureka.client.fetch-registry", ignored: embeddedClient},
	{name: "eureka.client.*", ignored: embeddedClient},
	{name: "eureka.instance.hostname", unit: special, does: "self-recognition: a peer URL of this host and the server's port is this node"},
	{name: "eureka.instance.*", ignored: ownInstance},
	{name: "eureka.dashboard.path", flag: "dashboard-path"},
	{name: "eureka.dashboard.enabled", unit: special, does: "false: -dashboard-path off"},
	{name: "eureka.environment", flag: "environment"},
	{name: "eureka.datacenter", ignored: "the status page here reports no data center"},

	{name: "eureka.server.enable-self-preservation", flag: "self-preservation", unit: boolean},
	{name: "eureka.server.renewal-percent-threshold", flag: "renewal-percent-threshold"},
	{name: "eureka.server.renewal-threshold-update-interval-ms", flag: "renewal-threshold-update-interval", unit: millis},
	{name: "eureka.server.expected-client-renewal-interval-seconds", flag: "expected-client-renewal-interval", unit: seconds},
	{name: "eureka.server.eviction-interval-timer-in-ms", flag: "eviction-interval", unit: millis},
	{name: "eureka.server.retention-time-in-m-s-in-delta-queue", flag: "delta-retention", unit: millis},
	{name: "eureka.server.disable-delta", flag: "disable-delta", unit: boolean},
	{name: "eureka.server.my-url", flag: "self-url"},
	{name: "eureka.server.wait-time-in-ms-when-sync-empty", flag: "startup-sync-empty-wait", unit: millis},
	{name: "eureka.server.remote-region-urls-with-name.*", unit: special, does: "-remote-regions: each key a region, its value the region's service URL"},
	{name: "eureka.server.remote-region-app-whitelist.*", unit: special, does: "-remote-region-apps: each key a region (global for all), its value the apps"},
	{name: "eureka.server.remote-region-registry-fetch-interval", flag: "remote-region-fetch-interval", unit: seconds},
	{name: "eureka.server.disable-transparent-fallback-to-other-region", flag: "disable-transparent-fallback", unit: boolean},
	{name: "eureka.server.remote-region-urls", ignored: "its URLs name no region; give eureka.server.remote-region-urls-with-name"},
	{name: "eureka.server.delta-retention-timer-interval-in-ms", ignored: "the delta keeps each change for -delta-retention; when it drops them is not settable"},
	{name: "eureka.server.use-read-only-response-cache", ignored: noResponseCache},
	{name: "eureka.server.response-cache-update-interval-ms", ignored: noResponseCache},
	{name: "eureka.server.response-cache-auto-expiration-in-seconds", ignored: noResponseCache},
	{name: "eureka.server.initial-capacity-of-response-cache", ignored: noResponseCache},
	{name: "eureka.server.registry-sync-retries", ignored: syncRetries},
	{name: "eureka.server.registry-sync-retry-wait-ms", ignored: syncRetries},
	{name: "eureka.server.peer-eureka-nodes-update-interval-ms", ignored: peerListOnce},
	{name: "eureka.server.peer-eureka-status-refresh-time-interval-ms", ignored: peerListOnce},
	{name: "eureka.server.peer-node-connect-timeout-ms", ignored: peerClient},
	{name: "eureka.server.peer-node-read-timeout-ms", ignored: peerClient},
	{name: "eureka.server.peer-node-total-connections", ignored: peerClient},
	{name: "eureka.server.peer-node-total-connections-per-host", ignored: peerClient},
	{name: "eureka.server.peer-node-connection-idle-timeout-seconds", ignored: peerClient},
	{name: "eureka.server.enable-replicated-request-compression", ignored: peerClient},
	{name: "eureka.server.number-of-replication-retries", ignored: "the Java server does not read it either"},
	{name: "eureka.server.batch-replication", ignored: "replication always batches, here as in the Java server"},
	{name: "eureka.server.max-time-for-replication", ignored: "a task here waits for its peer until the peer takes it or the instance changes again"},
	{name: "eureka.server.sync-when-timestamp-differs", ignored: "a peer's newer copy is always taken here (its 409)"},
	{name: "eureka.server.min-available-instances-for-peer-replication", ignored: "replication here does not wait for a count of instances"},
	{name: "eureka.server.max-elements-in-peer-replication-pool", ignored: noThreadPools},
	{name: "eureka.server.max-elements-in-status-replication-pool", ignored: noThreadPools},
	{name: "eureka.server.max-idle-thread-age-in-minutes-for-peer-replication", ignored: noThreadPools},
	{name: "eureka.server.max-idle-thread-in-minutes-age-for-status-replication", ignored: noThreadPools},
	{name: "eureka.server.min-threads-for-peer-replication", ignored: noThreadPools},
	{name: "eureka.server.max-threads-for-peer-replication", ignored: noThreadPools},
	{name: "eureka.server.min-threads-for-status-replication", ignored: noThreadPools},
	{name: "eureka.server.max-threads-for-status-replication", ignored: noThreadPools},
	{name: "eureka.server.remote-region-fetch-thread-pool-size", ignored: noThreadPools},
	{name: "eureka.server.disable-delta-for-remote-regions", ignored: "remote regions are read whole here (watched on our servers)"},
	{name: "eureka.server.remote-region-connect-timeout-ms", ignored: remoteClient},
	{name: "eureka.server.remote-region-read-timeout-ms", ignored: remoteClient},
	{name: "eureka.server.remote-region-total-connections", ignored: remoteClient},
	{name: "eureka.server.remote-region-total-connections-per-host", ignored: remoteClient},
	{name: "eureka.server.remote-region-connection-idle-timeout-seconds", ignored: remoteClient},
	{name: "eureka.server.g-zip-content-from-remote-region", ignored: remoteClient},
	{name: "eureka.server.remote-region-trust-store", ignored: remoteClient},
	{name: "eureka.server.remote-region-trust-store-password", ignored: remoteClient},
	{name: "eureka.server.rate-limiter-enabled", ignored: noRateLimiter},
	{name: "eureka.server.rate-limiter-throttle-standard-clients", ignored: noRateLimiter},
	{name: "eureka.server.rate-limiter-privileged-clients", ignored: noRateLimiter},
	{name: "eureka.server.rate-limiter-burst-size", ignored: noRateLimiter},
	{name: "eureka.server.rate-limiter-registry-fetch-average-rate", ignored: noRateLimiter},
	{name: "eureka.server.rate-limiter-full-fetch-average-rate", ignored: noRateLimiter},
	{name: "eureka.server.json-codec-name", ignored: noCodecChoice},
	{name: "eureka.server.xml-codec-name", ignored: noCodecChoice},
	{name: "eureka.server.log-identity-headers", ignored: "the DiscoveryIdentity headers are not logged here"},
	{name: "eureka.server.a-w-s-access-id", ignored: noAWS},
	{name: "eureka.server.a-w-s-secret-key", ignored: noAWS},
	{name: "eureka.server.e-i-p-bind-rebind-retries", ignored: noAWS},
	{name: "eureka.server.e-i-p-binding-retry-interval-ms", ignored: noAWS},
	{name: "eureka.server.e-i-p-binding-retry-interval-ms-when-unbound", ignored: noAWS},
	{name: "eureka.server.binding-strategy", ignored: noAWS},
	{name: "eureka.server.route53-bind-rebind-retries", ignored: noAWS},
	{name: "eureka.server.route53-binding-retry-interval-ms", ignored: noAWS},
	{name: "eureka.server.route53-domain-t-t-l", ignored: noAWS},
	{name: "eureka.server.a-s-g-query-timeout-ms", ignored: noAWS},
	{name: "eureka.server.a-s-g-update-interval-ms", ignored: noAWS},
	{name: "eureka.server.a-s-g-cache-expiry-timeout-ms", ignored: noAWS},
	{name: "eureka.server.list-auto-scaling-groups-role-name", ignored: noAWS},
	{name: "eureka.server.prime-aws-replica-connections", ignored: noAWS},
}
