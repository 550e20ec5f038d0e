// Package replication keeps the nodes of a registry cluster in step with
// Eureka's own peer protocol (protocol doc 4.10 and 4.11), so Eurekagate
// nodes also join a cluster of Java Eureka servers.
//
// Peers consumes a Store's change stream and heartbeats and queues what
// the Store's clients wrote for every other node: one queue per peer,
// deduplicated per task, sent in batches to POST
// {peer}peerreplication/batch/, with repair when a peer answers 404 or 409.
// SyncFrom fills a starting node from a peer. Apply and the batch codec
// are the receiving side, which the REST API (registry/httpapi) serves.
//
// It talks to the Store only through its exported methods.
package replication
