package registry

import (
	"math"
	"strconv"
	"strings"

	"github.com/eurekagate/eurekagate/eureka"
)

// ValidationError is a registration the server refuses, with Eureka's
// message ("Missing hostname", ...). The API answers it with 400.
type ValidationError struct{ Message string }

// Error returns the Eureka message.
func (e *ValidationError) Error() string { return e.Message }

// MaxLeaseSecs is the largest leaseInfo.durationInSecs and
// renewalIntervalInSecs a registration may carry: Java's int, which Eureka
// clients and servers hold them in (about 68 years). Larger values would
// overflow when turned into milliseconds.
const MaxLeaseSecs = math.MaxInt32

// Validate checks a registration for application pathApp (upper-cased) as
// Eureka's ApplicationResource does, in its order, and returns a
// *ValidationError with Eureka's message for the first failure. An empty
// pathApp skips the app-name match.
//
// It then checks what Eureka does not, in messages of the same style: a
// port or secure port outside 0 to 65535 ("Invalid port, expecting 0 to
// 65535 but was 70000"), and a leaseInfo.durationInSecs or
// renewalIntervalInSecs above MaxLeaseSecs. Zero and negative lease values
// mean the defaults (90 s and 30 s), as in Eureka.
func Validate(i *eureka.InstanceInfo, pathApp string) error {
	fail := func(msg string) error { return &ValidationError{Message: msg} }
	switch {
	case isBlank(i.ID()):
		return fail("Missing instanceId")
	case isBlank(i.HostName):
		return fail("Missing hostname")
	case isBlank(i.IPAddr):
		return fail("Missing ip address")
	case isBlank(i.App):
		return fail("Missing appName")
	case pathApp != "" && strings.ToUpper(pathApp) != strings.ToUpper(i.App):
		// Upper-cased and compared, as Eureka does and as the Store keeps
		// names: case folding would let /apps/KAFKA register the app
		// "\u212aAFKA" (a Kelvin sign), a name outside an account's binding.
		return fail("Mismatched appName, expecting " + strings.ToUpper(pathApp) + " but was " + strings.ToUpper(i.App))
	case i.DataCenterInfo.Name == "":
		// The decoders cannot tell a missing dataCenterInfo from one without
		// a name; both read as an empty name.
		return fail("Missing dataCenterInfo")
	case isBlank(i.DataCenterInfo.Name):
		return fail("Missing dataCenterInfo Name")
	case i.Port.Number < 0 || i.Port.Number > 65535:
		return fail("Invalid port, expecting 0 to 65535 but was " + strconv.Itoa(i.Port.Number))
	case i.SecurePort.Number < 0 || i.SecurePort.Number > 65535:
		return fail("Invalid securePort, expecting 0 to 65535 but was " + strconv.Itoa(i.SecurePort.Number))
	case i.LeaseInfo.DurationInSecs > MaxLeaseSecs:
		return fail("Invalid leaseInfo.durationInSecs, expecting at most " + strconv.Itoa(MaxLeaseSecs) + " but was " + strconv.Itoa(i.LeaseInfo.DurationInSecs))
	case i.LeaseInfo.RenewalIntervalInSecs > MaxLeaseSecs:
		return fail("Invalid leaseInfo.renewalIntervalInSecs, expecting at most " + strconv.Itoa(MaxLeaseSecs) + " but was " + strconv.Itoa(i.LeaseInfo.RenewalIntervalInSecs))
	}
	return nil
}

func isBlank(s string) bool { return strings.TrimSpace(s) == "" }

// Register adds or replaces the lease of an instance with Eureka's rules
// (protocol doc 4.2): an existing registration with a strictly newer
// lastDirtyTimestamp is kept instead of the incoming one; a new lease is
// created either way; overrides are carried over and the override rules
// decide the status; the change is recorded as ADDED. replication marks a
// registration received from a peer. A missing lastDirtyTimestamp means now.
//
// A cancel is remembered for DeltaRetention: a replicated registration no
// newer than it is refused with ErrCancelled, and a client's own
// registration after it gets a lastDirtyTimestamp newer than it, so that
// its replicas are not refused.
//
// Register does not modify i. It returns a *ValidationError for an instance
// that Validate refuses.
func (s *Store) Register(i *eureka.InstanceInfo, replication bool) error {
	if err := Validate(i, ""); err != nil {
		return err
	}
	s.mu.Lock()
	in, now := i.Clone(), s.nowMillis()
	in.App = strings.ToUpper(in.App)
	if replication && s.buried(in.App, in.ID(), in.LastDirtyTimestamp) {
		s.mu.Unlock()
		return ErrCancelled
	}
	s.registerLocked(in, Registered, replication, now)
	s.mu.Unlock()
	s.deliver()
	return nil
}

// registerLocked takes ownership of in and records the change as kind. The
// caller holds the write lock.
func (s *Store) registerLocked(in *eureka.InstanceInfo, kind ChangeKind, replication bool, now int64) *lease {
	in.App = strings.ToUpper(in.App)
	if in.LastDirtyTimestamp == 0 {
		in.LastDirtyTimestamp = now
	}
	if in.DataCenterInfo.IsAmazon() && in.DataCenterInfo.Metadata["instance-id"] == "" {
		// Eureka copies the derived id into an empty Amazon instance-id.
		md := make(map[string]string, len(in.DataCenterInfo.Metadata)+1)
		for k, v := range in.DataCenterInfo.Metadata {
			md[k] = v
		}
		md["instance-id"] = in.ID()
		in.DataCenterInfo.Metadata = md
	}
	id := in.ID()
	if t, ok := s.tombstones[tombstoneKey(in.App, id)]; ok {
		// A registration after a cancel: the client's own, or a peer's newer
		// one. It outranks the cancel, and its replicas must too.
		in.LastDirtyTimestamp = max(in.LastDirtyTimestamp, t.dirty+1)
		delete(s.tombstones, tombstoneKey(in.App, id))
	}
	a := s.apps[in.App]
	if a == nil {
		// Rewritten by its creation: no piece of an app of this name
		// before it may be extended.
		a = &appLeases{leases: map[string]*lease{}, rewritten: s.version.Load() + 1}
		s.apps[in.App] = a
	}
	existing := a.leases[id]
	registrant := in
	if existing != nil && existing.info.LastDirtyTimestamp > in.LastDirtyTimestamp {
		registrant = existing.info.Clone()
	}
	if existing == nil {
		if s.expected > 0 {
			s.expected++
			s.updateThresholdLocked()
		}
	}

	// The lease duration is the incoming registration's, even when the kept
	// copy wins, as in Eureka.
	l := &lease{registered: now, duration: int64(in.LeaseInfo.Duration()) * 1000}
	l.lastRenew.Store(now)
	if existing != nil {
		l.serviceUp = existing.serviceUp
	}

	if st, ok := s.overrideFor(id, now); ok {
		registrant.OverriddenStatus = st
	} else if registrant.OverriddenStatus != eureka.StatusUnknown {
		s.setOverride(id, registrant.OverriddenStatus, now)
	}
	registrant.Status = s.effectiveStatus(registrant, existing, replication, now)
	if registrant.Status == eureka.StatusUp && l.serviceUp == 0 {
		l.serviceUp = now
	}
	registrant.ActionType = eureka.ActionAdded
	registrant.LastUpdatedTimestamp = now
	if existing != nil {
		s.setHolder(a, existing, nil)
	}
	s.setHolder(a, l, registrant)
	a.leases[id] = l
	s.record(kind, registrant.App, l, existing == nil, replication, now)
	return l
}
