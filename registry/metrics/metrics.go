// Package metrics exports a registry node as Prometheus metrics: a
// Collector that reads the Store (instances by app and status,
// self-preservation numbers, the totals its change stream counts, payload
// sizes) and the replication state at scrape time, so nothing is computed
// on the write path. It is its own package so that the Store needs no
// Prometheus import and a node without metrics links none of it.
package metrics

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/eurekagate/eurekagate/eureka"
	"github.com/eurekagate/eurekagate/internal/fastserve"
	"github.com/eurekagate/eurekagate/registry"
	"github.com/eurekagate/eurekagate/registry/replication"
)

// Collector exports a Store's state as Prometheus metrics, read from the
// Store at scrape time: instances by app and status, the registration,
// renewal, cancel and eviction totals, the self-preservation numbers, fetch
// totals, payload sizes, the failed accepts of this process's fasthttp
// servers and, with peers, the replication counters.
//
// Register it with any prometheus.Registerer. The standalone server serves
// it on /metrics; in Caddy it joins Caddy's metrics.
type Collector struct {
	store *registry.Store
	peers Peers

	instances, selfPreservation, renewsLastMinute, threshold, expected *prometheus.Desc
	registrations, renewals, cancels, evictions, fetches, payloadBytes *prometheus.Desc
	peerQueue, peerBatches, peerFailures, peerDropped, peerLastSuccess *prometheus.Desc
	peerLeftDropped                                                    *prometheus.Desc
	acceptErrors                                                       *prometheus.Desc
	regions                                                            *regions
	audit                                                              auditDropped
}

// Peers reports each current peer's replication state, and the tasks
// dropped with the queues of peers that left; *replication.Peers
// implements it.
type Peers interface {
	Stats() []replication.PeerStats
	LeftDropped() uint64
}

// New returns the collector for store and, if not nil, its peers, with
// metric names prefixed by namespace (such as "eureka" or "caddy_eureka").
func New(store *registry.Store, peers Peers, namespace string) *Collector {
	d := func(name, help string, labels ...string) *prometheus.Desc {
		return prometheus.NewDesc(prometheus.BuildFQName(namespace, "", name), help, labels, nil)
	}
	return &Collector{
		store:            store,
		peers:            peers,
		instances:        d("instances", "Registered instances by application and status.", "app", "status"),
		selfPreservation: d("self_preservation_active", "1 while self-preservation suspends evictions."),
		renewsLastMinute: d("renews_last_minute", "Renews counted in the previous full minute."),
		threshold:        d("renew_threshold", "Renews per minute at or below which self-preservation starts."),
		expected:         d("expected_renewing_clients", "Expected number of clients sending renews."),
		registrations:    d("registrations_total", "Registrations, including re-registrations and replicated ones."),
		renewals:         d("renewals_total", "Successful renews (heartbeats)."),
		cancels:          d("cancels_total", "Cancelled registrations."),
		evictions:        d("evictions_total", "Leases evicted after expiring."),
		fetches:          d("fetches_total", "Registry reads by kind (full, delta, app, vip).", "kind"),
		payloadBytes:     d("payload_bytes", "Size of the last serialized document.", "document", "format"),
		peerQueue:        d("peer_queue_length", "Replication tasks waiting for a peer.", "peer"),
		peerBatches:      d("peer_batches_sent_total", "Replication batches a peer accepted.", "peer"),
		peerFailures:     d("peer_failures_total", "Replication batches that failed.", "peer"),
		peerDropped:      d("peer_dropped_total", "Replication tasks dropped (queue full, stale, refused).", "peer"),
		peerLastSuccess:  d("peer_last_success_timestamp_seconds", "When a peer last accepted a batch.", "peer"),
		peerLeftDropped:  d("peer_left_dropped_total", "Replication tasks dropped with the queue of a peer that left the membership."),
		acceptErrors:     d("accept_errors_total", "Failures to accept a connection (out of file descriptors, say) of this process's fasthttp servers, which wait and accept again.", "server"),
		regions:          newRegions(store, namespace),
		audit:            newAuditDropped(namespace),
	}
}

// Describe sends the metrics' descriptions.
func (m *Collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{m.instances, m.selfPreservation, m.renewsLastMinute, m.threshold, m.expected,
		m.registrations, m.renewals, m.cancels, m.evictions, m.fetches, m.payloadBytes,
		m.peerQueue, m.peerBatches, m.peerFailures, m.peerDropped, m.peerLastSuccess, m.peerLeftDropped, m.acceptErrors} {
		ch <- d
	}
	m.regions.Describe(ch)
	m.audit.Describe(ch)
}

// Collect reads the Store and sends the current values.
func (m *Collector) Collect(ch chan<- prometheus.Metric) {
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	counter := func(d *prometheus.Desc, v uint64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v), labels...)
	}
	for app, byStatus := range m.store.Stats().StatusCounts() {
		for st, n := range byStatus {
			if n > 0 {
				gauge(m.instances, float64(n), app, eureka.Status(st).String())
			}
		}
	}
	sp := m.store.Stats().SelfPreservation()
	active := 0.0
	if sp.Active {
		active = 1
	}
	gauge(m.selfPreservation, active)
	gauge(m.renewsLastMinute, float64(sp.RenewsLastMinute))
	gauge(m.threshold, float64(sp.Threshold))
	gauge(m.expected, float64(sp.ExpectedRenewingClients))
	t := m.store.Stats().Totals()
	counter(m.registrations, t.Registrations)
	counter(m.renewals, t.Renewals)
	counter(m.cancels, t.Cancels)
	counter(m.evictions, t.Evictions)
	counter(m.fetches, t.FullFetches, "full")
	counter(m.fetches, t.DeltaFetches, "delta")
	counter(m.fetches, t.AppFetches, "app")
	counter(m.fetches, t.VIPFetches, "vip")
	full, delta := m.store.Documents().Sizes()
	for format, n := range full {
		gauge(m.payloadBytes, float64(n), "full", format)
	}
	for format, n := range delta {
		gauge(m.payloadBytes, float64(n), "delta", format)
	}
	for _, a := range fastserve.AcceptErrors() {
		counter(m.acceptErrors, a.Count, a.Name)
	}
	m.regions.Collect(ch)
	m.audit.Collect(ch)
	if m.peers == nil {
		return
	}
	counter(m.peerLeftDropped, m.peers.LeftDropped())
	for _, p := range m.peers.Stats() {
		gauge(m.peerQueue, float64(p.QueueLength), p.URL)
		counter(m.peerBatches, p.BatchesSent, p.URL)
		counter(m.peerFailures, p.Failures, p.URL)
		counter(m.peerDropped, p.Dropped, p.URL)
		last := 0.0
		if !p.LastSuccess.IsZero() {
			last = float64(p.LastSuccess.UnixNano()) / 1e9
		}
		gauge(m.peerLastSuccess, last, p.URL)
	}
}

var _ prometheus.Collector = (*Collector)(nil)
