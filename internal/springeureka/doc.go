// Package springeureka reads a Spring Cloud Eureka Server's configuration
// (through internal/springconfig) and says what each property sets here:
// the catalogue of every property, by the name of the cmd/eureka flag it
// sets or the reason it has no effect (Properties, Known); the mapping of
// Spring's units and forms to the flags' (Read, Settings); and one note
// for each property read and not applied, so that none is ignored
// silently. cmd/eureka and the Caddy module's spring_config apply what it
// gives.
package springeureka
