package metrics

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/eurekagate/eurekagate/registry/audit"
)

// auditDropped exports audit_dropped_total: the audit trail's events
// (registry/audit) dropped because its writer fell behind, across this
// process's trails; 0 where no trail is kept.
type auditDropped struct{ desc *prometheus.Desc }

func newAuditDropped(namespace string) auditDropped {
	return auditDropped{prometheus.NewDesc(prometheus.BuildFQName(namespace, "", "audit_dropped_total"),
		"Audit trail events dropped because the trail's writer fell behind (its queue was full).", nil, nil)}
}

func (a auditDropped) Describe(ch chan<- *prometheus.Desc) { ch <- a.desc }

func (a auditDropped) Collect(ch chan<- prometheus.Metric) {
	ch <- prometheus.MustNewConstMetric(a.desc, prometheus.CounterValue, float64(audit.DroppedTotal()))
}
