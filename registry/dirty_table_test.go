package registry

import (
	"testing"
	"time"

	"github.com/eurekagate/eurekagate/eureka"
)

// tIncoming is when the second registration of TestRegisterLastDirtyTimestampTable
// arrives: one second after the first.
var tIncoming = t0 + 1000

// registerDirtyRow is a registration over an existing one (protocol doc
// 4.2 step 2), compared by lastDirtyTimestamp; a missing one means the
// time of the request (3.1: "decode time if absent").
type registerDirtyRow struct {
	section  string
	name     string
	existing int64 // the existing registration's lastDirtyTimestamp; 0 no lease
	incoming int64 // the incoming one's; 0 missing
	repl     bool

	wantHost  string // "existing" or "incoming": whose data is kept
	wantDirty int64
}

// TestRegisterLastDirtyTimestampTable checks which registration wins: the
// existing one only if its lastDirtyTimestamp is strictly newer, and the
// incoming one on a tie; either way the lease is new (4.2 step 4) and the
// change is an ADDED one made now (3.7).
func TestRegisterLastDirtyTimestampTable(t *testing.T) {
	rows := []registerDirtyRow{
		{section: "4.2 step 2", name: "client, incoming older: the existing one is kept", existing: 2000, incoming: 1000, wantHost: "existing", wantDirty: 2000},
		{section: "4.2 step 2", name: "client, equal: the incoming one wins", existing: 2000, incoming: 2000, wantHost: "incoming", wantDirty: 2000},
		{section: "4.2 step 2", name: "client, incoming newer wins", existing: 2000, incoming: 3000, wantHost: "incoming", wantDirty: 3000},
		{section: "4.2 step 2", name: "replicated, incoming older: the existing one is kept", repl: true, existing: 2000, incoming: 1000, wantHost: "existing", wantDirty: 2000},
		{section: "4.2 step 2", name: "replicated, equal: the incoming one wins", repl: true, existing: 2000, incoming: 2000, wantHost: "incoming", wantDirty: 2000},
		{section: "4.2 step 2", name: "replicated, incoming newer wins", repl: true, existing: 2000, incoming: 3000, wantHost: "incoming", wantDirty: 3000},
		{section: "4.2 / 3.1 (missing means now)", name: "a new registration without one gets now", incoming: 0, wantHost: "incoming", wantDirty: tIncoming},
		{section: "4.2 step 2 / 3.1 (missing means now)", name: "missing beats an older existing one", existing: 2000, wantHost: "incoming", wantDirty: tIncoming},
		{section: "4.2 step 2 / 3.1 (missing means now)", name: "missing ties with an existing one of now: incoming wins", existing: tIncoming, wantHost: "incoming", wantDirty: tIncoming},
		{section: "4.2 step 2 / 3.1 (missing means now)", name: "missing loses to an existing one ahead of now", existing: tIncoming + 1, wantHost: "existing", wantDirty: tIncoming + 1},
		{section: "4.2 step 2 / 3.1 (missing means now)", name: "replicated, missing loses to one ahead of now", repl: true, existing: tIncoming + 1, wantHost: "existing", wantDirty: tIncoming + 1},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			s, clock := newTestStore(t, Config{})
			if row.existing != 0 {
				first := inst("A", "x")
				first.HostName, first.LastDirtyTimestamp = "existing", row.existing
				mustRegister(t, s, first, false)
			}
			clock.Advance(time.Second)
			if clock.Now().UnixMilli() != tIncoming {
				t.Fatal("setup: the clock is not at tIncoming")
			}
			in := inst("A", "x")
			in.HostName, in.LastDirtyTimestamp = "incoming", row.incoming
			mustRegister(t, s, in, row.repl)

			got := holder(s, "A", "x")
			expectRow(t, row.section, "kept registration (hostName)", got.HostName, row.wantHost)
			expectRow(t, row.section, "lastDirtyTimestamp", got.LastDirtyTimestamp, row.wantDirty)
			expectRow(t, row.section+" / 4.2 step 4", "registrationTimestamp (a new lease)", got.LeaseInfo.RegistrationTimestamp, tIncoming)
			expectRow(t, row.section+" / 3.7", "lastUpdatedTimestamp", got.LastUpdatedTimestamp, tIncoming)
			expectRow(t, row.section+" / 3.7", "actionType", got.ActionType, eureka.ActionAdded)
		})
	}
}

// renewDirtyRow is a heartbeat on an instance stored with
// lastDirtyTimestamp 5000 (protocol doc 2.2 (6), 4.3, 4.11).
type renewDirtyRow struct {
	section  string
	name     string
	noLease  bool
	dirty    int64 // the request's lastDirtyTimestamp; 0 missing
	repl     bool
	override string // the request's overriddenstatus; "" none

	want      int    // the answer: 200, 404 or 409
	wantEntry string // the override map's entry afterwards; "" none
}

// TestRenewLastDirtyTimestampTable checks the answers to a heartbeat's
// lastDirtyTimestamp: equal or missing 200; newer than the server's copy
// 404, so the client registers again; older 200 from a client and 409 with
// the server's copy to a replicating peer; and a replicated 404 stores the
// peer's overriddenstatus. The lease is renewed whatever the answer (step 1
// comes first).
func TestRenewLastDirtyTimestampTable(t *testing.T) {
	rows := []renewDirtyRow{
		{section: "2.2 (6) step 3", name: "client, missing: 200", want: 200},
		{section: "2.2 (6) step 3", name: "replicated, missing: 200", repl: true, want: 200},
		{section: "2.2 (6) step 2", name: "client, equal: 200", dirty: 5000, want: 200},
		{section: "2.2 (6) step 2", name: "replicated, equal: 200", dirty: 5000, repl: true, want: 200},
		{section: "2.2 (6) step 2", name: "client, newer: 404", dirty: 6000, want: 404},
		{section: "2.2 (6) step 2", name: "replicated, newer: 404", dirty: 6000, repl: true, want: 404},
		{section: "2.2 (6) step 2", name: "client, older: 200", dirty: 4000, want: 200},
		{section: "2.2 (6) step 2 / 4.11", name: "replicated, older: 409 with the server's copy", dirty: 4000, repl: true, want: 409},
		{section: "2.2 (6) step 2 / 4.11", name: "replicated, newer, with an override: 404 and the override stored", dirty: 6000, repl: true, override: "OUT_OF_SERVICE", want: 404, wantEntry: "OUT_OF_SERVICE"},
		{section: "2.2 (6) step 2", name: "replicated, newer, with UNKNOWN: 404, nothing stored", dirty: 6000, repl: true, override: "UNKNOWN", want: 404},
		{section: "2.2 (6) step 2", name: "replicated, equal, with an override: 200, nothing stored", dirty: 5000, repl: true, override: "OUT_OF_SERVICE", want: 200},
		{section: "2.2 (6) step 2", name: "replicated, older, with an override: 409, nothing stored", dirty: 4000, repl: true, override: "OUT_OF_SERVICE", want: 409},
		{section: "2.2 (6) step 2", name: "client, newer, with an override: 404, nothing stored (replication only)", dirty: 6000, override: "OUT_OF_SERVICE", want: 404},
		{section: "2.2 (6) step 1", name: "client, no lease: 404", noLease: true, dirty: 5000, want: 404},
		{section: "2.2 (6) step 1", name: "replicated, no lease, with an override: 404, nothing stored", noLease: true, dirty: 6000, repl: true, override: "OUT_OF_SERVICE", want: 404},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			s, clock := newTestStore(t, Config{})
			if !row.noLease {
				i := inst("A", "x")
				i.LastDirtyTimestamp = 5000
				mustRegister(t, s, i, false)
			}
			clock.Advance(10 * time.Second)
			req := RenewRequest{LastDirtyTimestamp: row.dirty, Replication: row.repl}
			if row.override != "" {
				req.OverriddenStatus = status(t, row.override)
			}
			res, serverCopy := s.Renew("A", "x", req)
			expectRow(t, row.section, "answer", renewCode(res), row.want)
			switch {
			case row.want == 409 && serverCopy == nil:
				t.Errorf("protocol doc %s: 409 without the server's copy", row.section)
			case row.want == 409:
				expectRow(t, row.section, "409 copy: id", serverCopy.ID(), "x")
				expectRow(t, row.section, "409 copy: lastDirtyTimestamp", serverCopy.LastDirtyTimestamp, int64(5000))
			case serverCopy != nil:
				t.Errorf("protocol doc %s: a %d carries an instance", row.section, row.want)
			}
			expectRow(t, row.section, "override entry", entryName(s, "x"), row.wantEntry)
			if row.noLease {
				return
			}
			got := holder(s, "A", "x")
			expectRow(t, row.section+" / 4.3", "lease renewed (lastRenewalTimestamp)", got.LeaseInfo.LastRenewalTimestamp, clock.Now().UnixMilli())
			expectRow(t, row.section, "stored lastDirtyTimestamp", got.LastDirtyTimestamp, int64(5000))
			expectRow(t, row.section, "status", got.Status, eureka.StatusUp)
			wantOver := row.wantEntry
			if wantOver == "" {
				wantOver = "UNKNOWN"
			}
			expectRow(t, row.section, "overriddenStatus on the instance", got.OverriddenStatus.String(), wantOver)
		})
	}
}
