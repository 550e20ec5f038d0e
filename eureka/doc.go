// Package eureka is the Netflix Eureka v1 wire protocol: the InstanceInfo,
// Application and Applications documents, instance statuses and action
// types, the legacy JSON and XStream XML codecs, and the reconcile hash.
//
// Output is exact: documents are written byte for byte as a Netflix or Spring
// Cloud Eureka server writes them (root wrappers, arrays always, string
// "@enabled", string timestamps, the EmptyMap marker, escaped XML names), so
// that the strict Spring client, the legacy Java client, hudl/fargo and
// eureka-js-client all read them. Input is lenient: every dialect those
// clients send is accepted (numbers or strings, booleans or strings, nulls,
// a missing "@class", "overriddenstatus" or "overriddenStatus", gzip).
//
// The package does no I/O and holds no state.
package eureka
