package registry

import (
	"testing"

	"github.com/eurekagate/eurekagate/eureka"
)

// The tables in *_table_test.go check the Store against the protocol doc
// (eureka-protocol.md). Each row names the section it comes from, and
// every failure message starts with that section. Expected values are
// written out in the rows, worked from the doc's rules and formulas, never
// computed by the Store.

// t0 is when a test Store's fake clock starts, in ms.
var t0 = newFakeClock().Now().UnixMilli()

// expectRow fails the row checking the doc's section when got is not want.
func expectRow[T comparable](t *testing.T, section, what string, got, want T) {
	t.Helper()
	if got != want {
		t.Errorf("protocol doc %s: %s = %v, want %v", section, what, got, want)
	}
}

// status reads a status name of a table row ("UP", "OUT_OF_SERVICE"...).
func status(t *testing.T, name string) eureka.Status {
	t.Helper()
	st, ok := eureka.LookupStatus(name)
	if !ok {
		t.Fatalf("bad status %q in the table", name)
	}
	return st
}

// entryName is the override map's entry for id as a table writes it: ""
// when there is none.
func entryName(s *Store, id string) string {
	if st, ok := s.Overrides()[id]; ok {
		return st.String()
	}
	return ""
}

// putOverride puts an entry in the override map without touching the
// instance, as a peer's replicated heartbeat does (protocol doc 2.2 (6)).
func putOverride(s *Store, id string, st eureka.Status) {
	s.mu.Lock()
	s.setOverride(id, st, s.nowMillis())
	s.mu.Unlock()
}

// holder returns the stored instance (app, id) as the full registry shows
// it, expired or not, or nil.
func holder(s *Store, app, id string) *eureka.InstanceInfo {
	a, ok := s.Application(app)
	if !ok {
		return nil
	}
	for _, i := range a.Instances {
		if i.ID() == id {
			return i
		}
	}
	return nil
}

// renewCode is a RenewResult as the API answers it.
func renewCode(r RenewResult) int {
	switch r {
	case RenewOK:
		return 200
	case RenewNotFound:
		return 404
	case RenewConflict:
		return 409
	}
	return -1
}
