package registry

import (
	"strconv"

	"go.uber.org/zap"
)

// logChange writes the info line an operator cares about for a change:
// new registrations, cancels, evictions and status overrides; never
// heartbeats or re-registrations. It runs at delivery, outside the locks.
func (s *Store) logChange(c *Change) {
	var msg string
	switch {
	case c.Kind == Registered && c.New:
		msg = "instance registered"
	case c.Kind == Cancelled:
		msg = "instance cancelled"
	case c.Kind == Evicted:
		msg = "instance evicted"
	case c.Kind == StatusSet:
		msg = "status override set"
	case c.Kind == OverrideDeleted:
		msg = "status override deleted"
	default:
		return
	}
	ce := s.log.Check(zap.InfoLevel, msg)
	if ce == nil {
		return
	}
	fields := []zap.Field{zap.String("app", c.App), zap.String("id", c.ID)}
	switch c.Kind {
	case Registered:
		fields = append(fields, zap.String("address", c.Instance.HostName+":"+strconv.Itoa(c.Instance.Port.Number)))
	case StatusSet, OverrideDeleted:
		fields = append(fields, zap.Stringer("status", c.Instance.Status))
	}
	if c.Kind != Evicted {
		fields = append(fields, zap.Bool("replication", c.Replicated))
	}
	ce.Write(fields...)
}
