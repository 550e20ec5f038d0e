package springeureka

// unit is how a Spring property's value becomes its flag's.
type unit int

const (
	asIs    unit = iota // the value as written
	boolean             // Spring's true/false, yes/no, on/off, 1/0
	millis              // a whole number of milliseconds (the names ending in -ms)
	seconds             // a whole number of seconds (the names ending in -seconds)
)

// Property is one Spring property this server knows: the flag it
// sets, or why it has no effect here. A name ending in ".*" is a family:
// a map's keys, or every property under it.
type Property struct {
	Name    string // as Spring's documentation writes it
	flag    string // the flag it sets ("" when ignored, or read by its own code: does)
	unit    unit
	ignored string // why it has no effect here
	does    string // what it does here, when its own code reads it (mapping.go, peers.go, management.go)
}

// The reasons a known property has no effect here.
const (
	noResponseCache = "there is no read-only response cache: a read after a change sees it"
	noThreadPools   = "replication here is one sender per peer, with no thread pool"
	noAWS           = "this server binds no AWS resource (EIP, Route 53, ASG)"
	noRateLimiter   = "this server has no rate limiter"
	peerClient      = "the peers' HTTP client is not set by this property here (see -max-response-bytes, -startup-sync-timeout)"
	remoteClient    = "remote regions are read with the peers' HTTP client and -tls-ca"
	peerStatus      = "a peer's state comes from its replication answers, as they come"
	peerList        = "service-url's peers are read at start (-peers-file is re-read when it changes); -peers-dns names are looked up every -peers-resolve-interval"
	syncRetries     = "the start-up sync asks the peers again until -startup-sync-timeout"
	embeddedClient  = "a setting of the Java server's embedded client: this server registers with no one and its peers get its registry by replication"
	ownInstance     = "describes the Java server's own instance, which this server does not register"
	javaOnly        = "a Spring Boot setting of the Java application, which this server is not"
	noCodecChoice   = "one codec per format here"
)

// Properties is every Spring property this server reads: the
// docs/spring.md table is checked against it.
var Properties = []Property{
	{Name: "server.port", does: "the port of -addr (default 8761)"},
	{Name: "server.address", does: "the host of -addr (default every address)"},
	{Name: "server.servlet.context-path", does: "-prefix: the REST API is also served under <context-path>/eureka; and -actuator-path: the actuator under <context-path> and its base path, unless it has a port of its own"},
	{Name: "server.ssl.enabled", does: "false leaves the server.ssl.* files unread (plain HTTP)"},
	{Name: "server.ssl.certificate", does: "-tls-cert, PEM"},
	{Name: "server.ssl.certificate-private-key", does: "-tls-key, PEM"},
	{Name: "server.ssl.key-store", does: "-tls-cert, a PKCS12 key store (JKS is refused, with the keytool command that converts it)"},
	{Name: "server.ssl.key-store-type", does: "PKCS12, or none for a file not named .jks; JKS is refused"},
	{Name: "server.ssl.key-store-password", does: "-tls-cert-password"},
	{Name: "server.ssl.key-password", does: "the store's password too; another one is refused"},
	{Name: "server.ssl.key-alias", does: "logged as having no effect: the key store's one key is used"},
	{Name: "server.ssl.trust-certificate", does: "-tls-client-ca with client-auth need, PEM"},
	{Name: "server.ssl.trust-store", does: "-tls-client-ca with client-auth need, a PKCS12 trust store"},
	{Name: "server.ssl.trust-store-type", does: "PKCS12, or none for a file not named .jks; JKS is refused"},
	{Name: "server.ssl.trust-store-password", does: "-tls-client-ca-password"},
	{Name: "server.ssl.client-auth", does: "need: -tls-client-ca, every client presents a certificate; none: none asked for"},
	{Name: "spring.security.user.name", does: "the user of -auth-users (default user), needed on every request as with Spring Security's defaults (-auth-reads)"},
	{Name: "spring.security.user.password", does: "its password: plain, {noop}plain or {bcrypt}hash, as Spring's DelegatingPasswordEncoder writes them"},
	{Name: "eurekagate.auth.apps.*", does: "-auth-apps: each key an account (spring.security.user.name's, or one of -auth-users), its value the apps it may write (names, or patterns with *)"},
	{Name: "eurekagate.auth.cert-apps.*", does: "-auth-apps cert:<key>=...: each key a client certificate's common or DNS name, its value the apps it may write"},
	{Name: "eurekagate.auth.operators", does: "-auth-operators: the accounts that may override any app's status and cancel its instances"},
	{Name: "eurekagate.auth.audit-log", flag: "audit-log"},
	{Name: "spring.profiles.active", does: "the profiles whose documents and application-{profile} files apply"},
	{Name: "spring.config.location", does: "the files or directories read instead of application.* and config/application.*"},
	{Name: "spring.config.additional-location", does: "files or directories read after those"},
	{Name: "spring.config.name", does: "the files' name instead of application"},
	{Name: "spring.application.name", ignored: ownInstance},
	{Name: "spring.main.*", ignored: javaOnly},
	{Name: "spring.jmx.*", ignored: javaOnly},
	{Name: "spring.cloud.*", ignored: javaOnly},
	{Name: "spring.freemarker.*", ignored: "the dashboard here is its own page, not Freemarker's"},
	{Name: "spring.profiles.include", ignored: "profile groups and includes are not read here; list every profile in spring.profiles.active"},
	{Name: "spring.profiles.group.*", ignored: "profile groups and includes are not read here; list every profile in spring.profiles.active"},
	{Name: "spring.config.import", ignored: "imports are not read here; name the files in spring.config.location"},
	{Name: "logging.*", ignored: "the log here is zap's JSON on stderr, at info"},
	{Name: "info.*", ignored: "/actuator/info here shows the build alone (Spring Boot shows info.* only with management.info.env.enabled)"},

	{Name: "management.endpoints.web.exposure.include", does: "-actuator: the endpoints served (health, info, prometheus, or *); a name of an endpoint this server has not is logged and left out"},
	{Name: "management.endpoints.web.exposure.exclude", does: "the endpoints taken out of -actuator"},
	{Name: "management.endpoints.web.base-path", flag: "actuator-path"},
	{Name: "management.server.port", does: "the port of -management-addr (a server of the actuator's own); -1 serves no endpoint (-actuator off)"},
	{Name: "management.server.address", does: "the host of -management-addr"},
	{Name: "management.endpoint.health.show-details", flag: "actuator-health-details"},
	{Name: "management.endpoint.health.probes.enabled", ignored: "the liveness and readiness groups are always on here"},
	{Name: "management.*", ignored: "not an actuator setting this server has"},

	{Name: "eureka.client.service-url.*", does: "-peers: the URLs of the zones of eureka.client.availability-zones.<region> (defaultZone without one), as the Java server reads them; its own URL is recognised (-self-url, eureka.instance.hostname) and left out"},
	{Name: "eureka.client.region", flag: "region"},
	{Name: "eureka.client.availability-zones.*", does: "the zones whose service-url entries are the peers, for this region"},
	{Name: "eureka.client.register-with-eureka", ignored: embeddedClient},
	{Name: "eureka.client.fetch-registry", ignored: embeddedClient},
	{Name: "eureka.client.*", ignored: embeddedClient},
	{Name: "eureka.instance.hostname", does: "self-recognition: a peer URL of this host and the server's port is this node"},
	{Name: "eureka.instance.*", ignored: ownInstance},
	{Name: "eureka.dashboard.path", flag: "dashboard-path"},
	{Name: "eureka.dashboard.enabled", does: "false: -dashboard-path off"},
	{Name: "eureka.environment", flag: "environment"},
	{Name: "eureka.datacenter", ignored: "the status page here reports no data center"},

	{Name: "eureka.server.enable-self-preservation", flag: "self-preservation", unit: boolean},
	{Name: "eureka.server.renewal-percent-threshold", flag: "renewal-percent-threshold"},
	{Name: "eureka.server.renewal-threshold-update-interval-ms", flag: "renewal-threshold-update-interval", unit: millis},
	{Name: "eureka.server.expected-client-renewal-interval-seconds", flag: "expected-client-renewal-interval", unit: seconds},
	{Name: "eureka.server.eviction-interval-timer-in-ms", flag: "eviction-interval", unit: millis},
	{Name: "eureka.server.retention-time-in-m-s-in-delta-queue", flag: "delta-retention", unit: millis},
	{Name: "eureka.server.disable-delta", flag: "disable-delta", unit: boolean},
	{Name: "eureka.server.my-url", flag: "self-url"},
	{Name: "eureka.server.wait-time-in-ms-when-sync-empty", flag: "startup-sync-empty-wait", unit: millis},
	{Name: "eureka.server.remote-region-urls-with-name.*", does: "-remote-regions: each key a region, its value the region's service URL"},
	{Name: "eureka.server.remote-region-app-whitelist.*", does: "-remote-region-apps: each key a region (global for all), its value the apps"},
	{Name: "eureka.server.remote-region-registry-fetch-interval", flag: "remote-region-fetch-interval", unit: seconds},
	{Name: "eureka.server.disable-transparent-fallback-to-other-region", flag: "disable-transparent-fallback", unit: boolean},
	{Name: "eureka.server.remote-region-urls", ignored: "its URLs name no region; give eureka.server.remote-region-urls-with-name"},
	{Name: "eureka.server.delta-retention-timer-interval-in-ms", ignored: "the delta keeps each change for -delta-retention; when it drops them is not settable"},
	{Name: "eureka.server.use-read-only-response-cache", ignored: noResponseCache},
	{Name: "eureka.server.response-cache-update-interval-ms", ignored: noResponseCache},
	{Name: "eureka.server.response-cache-auto-expiration-in-seconds", ignored: noResponseCache},
	{Name: "eureka.server.initial-capacity-of-response-cache", ignored: noResponseCache},
	{Name: "eureka.server.registry-sync-retries", ignored: syncRetries},
	{Name: "eureka.server.registry-sync-retry-wait-ms", ignored: syncRetries},
	{Name: "eureka.server.peer-eureka-nodes-update-interval-ms", ignored: peerList},
	{Name: "eureka.server.peer-eureka-status-refresh-time-interval-ms", ignored: peerStatus},
	{Name: "eureka.server.peer-node-connect-timeout-ms", ignored: peerClient},
	{Name: "eureka.server.peer-node-read-timeout-ms", ignored: peerClient},
	{Name: "eureka.server.peer-node-total-connections", ignored: peerClient},
	{Name: "eureka.server.peer-node-total-connections-per-host", ignored: peerClient},
	{Name: "eureka.server.peer-node-connection-idle-timeout-seconds", ignored: peerClient},
	{Name: "eureka.server.enable-replicated-request-compression", ignored: peerClient},
	{Name: "eureka.server.number-of-replication-retries", ignored: "the Java server does not read it either"},
	{Name: "eureka.server.batch-replication", ignored: "replication always batches, here as in the Java server"},
	{Name: "eureka.server.max-time-for-replication", ignored: "a task here waits for its peer until the peer takes it or the instance changes again"},
	{Name: "eureka.server.sync-when-timestamp-differs", ignored: "a peer's newer copy is always taken here (its 409)"},
	{Name: "eureka.server.min-available-instances-for-peer-replication", ignored: "replication here does not wait for a count of instances"},
	{Name: "eureka.server.max-elements-in-peer-replication-pool", ignored: noThreadPools},
	{Name: "eureka.server.max-elements-in-status-replication-pool", ignored: noThreadPools},
	{Name: "eureka.server.max-idle-thread-age-in-minutes-for-peer-replication", ignored: noThreadPools},
	{Name: "eureka.server.max-idle-thread-in-minutes-age-for-status-replication", ignored: noThreadPools},
	{Name: "eureka.server.min-threads-for-peer-replication", ignored: noThreadPools},
	{Name: "eureka.server.max-threads-for-peer-replication", ignored: noThreadPools},
	{Name: "eureka.server.min-threads-for-status-replication", ignored: noThreadPools},
	{Name: "eureka.server.max-threads-for-status-replication", ignored: noThreadPools},
	{Name: "eureka.server.remote-region-fetch-thread-pool-size", ignored: noThreadPools},
	{Name: "eureka.server.disable-delta-for-remote-regions", ignored: "remote regions are read whole here (watched on our servers)"},
	{Name: "eureka.server.remote-region-connect-timeout-ms", ignored: remoteClient},
	{Name: "eureka.server.remote-region-read-timeout-ms", ignored: remoteClient},
	{Name: "eureka.server.remote-region-total-connections", ignored: remoteClient},
	{Name: "eureka.server.remote-region-total-connections-per-host", ignored: remoteClient},
	{Name: "eureka.server.remote-region-connection-idle-timeout-seconds", ignored: remoteClient},
	{Name: "eureka.server.g-zip-content-from-remote-region", ignored: remoteClient},
	{Name: "eureka.server.remote-region-trust-store", ignored: remoteClient},
	{Name: "eureka.server.remote-region-trust-store-password", ignored: remoteClient},
	{Name: "eureka.server.rate-limiter-enabled", ignored: noRateLimiter},
	{Name: "eureka.server.rate-limiter-throttle-standard-clients", ignored: noRateLimiter},
	{Name: "eureka.server.rate-limiter-privileged-clients", ignored: noRateLimiter},
	{Name: "eureka.server.rate-limiter-burst-size", ignored: noRateLimiter},
	{Name: "eureka.server.rate-limiter-registry-fetch-average-rate", ignored: noRateLimiter},
	{Name: "eureka.server.rate-limiter-full-fetch-average-rate", ignored: noRateLimiter},
	{Name: "eureka.server.json-codec-name", ignored: noCodecChoice},
	{Name: "eureka.server.xml-codec-name", ignored: noCodecChoice},
	{Name: "eureka.server.log-identity-headers", ignored: "the DiscoveryIdentity headers are not logged here"},
	{Name: "eureka.server.a-w-s-access-id", ignored: noAWS},
	{Name: "eureka.server.a-w-s-secret-key", ignored: noAWS},
	{Name: "eureka.server.e-i-p-bind-rebind-retries", ignored: noAWS},
	{Name: "eureka.server.e-i-p-binding-retry-interval-ms", ignored: noAWS},
	{Name: "eureka.server.e-i-p-binding-retry-interval-ms-when-unbound", ignored: noAWS},
	{Name: "eureka.server.binding-strategy", ignored: noAWS},
	{Name: "eureka.server.route53-bind-rebind-retries", ignored: noAWS},
	{Name: "eureka.server.route53-binding-retry-interval-ms", ignored: noAWS},
	{Name: "eureka.server.route53-domain-t-t-l", ignored: noAWS},
	{Name: "eureka.server.a-s-g-query-timeout-ms", ignored: noAWS},
	{Name: "eureka.server.a-s-g-update-interval-ms", ignored: noAWS},
	{Name: "eureka.server.a-s-g-cache-expiry-timeout-ms", ignored: noAWS},
	{Name: "eureka.server.list-auto-scaling-groups-role-name", ignored: noAWS},
	{Name: "eureka.server.prime-aws-replica-connections", ignored: noAWS},
}

// Here is what the property does here, as docs/spring.md's table says
// it.
func (p Property) Here() string {
	switch {
	case p.ignored != "":
		return "ignored: " + p.ignored
	case p.flag != "":
		switch p.unit {
		case millis:
			return "`-" + p.flag + "`, in milliseconds"
		case seconds:
			return "`-" + p.flag + "`, in seconds"
		}
		return "`-" + p.flag + "`"
	}
	return p.does
}
