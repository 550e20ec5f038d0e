// Package interop runs Spring Cloud Netflix itself against this module:
// a Spring Boot service with the Eureka client, a Spring Cloud Eureka
// Server and a Spring Cloud Gateway with the discovery locator, each a
// small Maven project under java/, built by the tests and started as a
// process on loopback next to our server, our gateways and our client;
// and grpc-java's own xDS client (io.grpc:grpc-xds 1.85.1, java/grpcxds),
// which calls xds:///orders through our xDS server. grpc-go's xDS client
// calls the gRPC ports Spring's client and ours register, through the
// bridge in front of the Java server and through our own server's xDS.
//
// The tests need a JDK 17 and Maven (and Maven Central, or a warm
// ~/.m2). Without them `go test ./interop/` skips, saying what is missing;
// with CI=true it fails instead. Run them with
//
//	go test -count=1 -v ./interop/
//
// The Java projects are pinned to Spring Boot 3.5.7 with Spring Cloud
// 2025.0.0 (Netflix 4.3.0, Eureka 2.0.4, Gateway 4.3.0): the Boot 3 line
// is what most Spring services run today, and the pair resolves whole
// from Maven Central. The client service is also built on Spring Boot
// 4.0.7 with Spring Cloud 2025.1.4 (java/client/pom-boot4.xml), whose
// Eureka client talks through RestClient instead of RestTemplate, and the
// tests of the Spring client against our server run on both.
//
// The gateway project has a Spring profile, ratelimit, that no test here
// uses and cmd/eurekabench ratelimit does: RequestRateLimiter on Redis on
// every route, the discovery locator's among them
// (java/gateway/src/main/resources/application-ratelimit.yml). Without it
// the gateway touches no Redis, so these tests need none.
//
// Every interval that would make a test take minutes is shortened through
// the properties Spring documents (see the start functions in the tests):
// heartbeats and fetches every second, the LoadBalancer's cache to one
// second, the Java server's response cache off and its eviction every
// second.
package interop
