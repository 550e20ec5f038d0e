package registry

import (
	"errors"
	"testing"
	"time"

	"github.com/eurekagate/eurekagate/eureka"
)

// overrideRuleRow is one case of the status override rules (protocol doc
// 4.5, first match wins), applied by a registration (4.2 steps 5 and 6) or
// a renew (4.3 step 2). Statuses are written by name; "" means none.
type overrideRuleRow struct {
	section string
	name    string
	lease   string // status of the existing lease's instance; "" no lease
	entry   string // the override map's entry for the id; "" none
	renew   bool   // renew instead of register
	repl    bool   // a replicated call
	in      string // register: the registrant's status
	inOver  string // register: the registrant's overriddenStatus; "" UNKNOWN

	want      string // the stored status afterwards; "" no instance
	wantEntry string // the map's entry afterwards; "" the same as entry
	wantRenew int    // renew: the answer; 0 means 200
}

// TestStatusOverrideRulesTable checks each rule of 4.5 in order: a
// self-reported DOWN, STARTING or UNKNOWN is trusted (rule 1), else the
// override map's entry wins (rule 2), else a client call keeps an existing
// lease's UP or OUT_OF_SERVICE (rule 4), else the instance's own status
// (rule 5); and the registrant's overriddenStatus, which enters the map only
// when it has no entry for the id (4.2 step 5).
func TestStatusOverrideRulesTable(t *testing.T) {
	rows := []overrideRuleRow{
		// Register.
		{section: "4.5 rule 1", name: "a self-reported DOWN is trusted", in: "DOWN", want: "DOWN"},
		{section: "4.5 rule 1 before rule 2", name: "DOWN wins over an override", lease: "OUT_OF_SERVICE", entry: "OUT_OF_SERVICE", in: "DOWN", want: "DOWN"},
		{section: "4.5 rule 1 before rule 2", name: "STARTING wins over an override", lease: "OUT_OF_SERVICE", entry: "OUT_OF_SERVICE", in: "STARTING", want: "STARTING"},
		{section: "4.5 rule 1 before rule 2", name: "replicated STARTING wins over an override", repl: true, lease: "UP", entry: "OUT_OF_SERVICE", in: "STARTING", want: "STARTING"},
		{section: "4.5 rule 1 before rule 4", name: "UNKNOWN wins over an UP lease", lease: "UP", in: "UNKNOWN", want: "UNKNOWN"},
		{section: "4.5 rule 2", name: "client UP under an OUT_OF_SERVICE override", lease: "OUT_OF_SERVICE", entry: "OUT_OF_SERVICE", in: "UP", want: "OUT_OF_SERVICE"},
		{section: "4.5 rule 2", name: "replicated UP under an OUT_OF_SERVICE override", repl: true, lease: "OUT_OF_SERVICE", entry: "OUT_OF_SERVICE", in: "UP", want: "OUT_OF_SERVICE"},
		{section: "4.5 rule 2 before rule 4", name: "an UP override lifts a client's OUT_OF_SERVICE lease", lease: "OUT_OF_SERVICE", entry: "UP", in: "OUT_OF_SERVICE", want: "UP"},
		{section: "4.5 rule 2", name: "an override without a lease", entry: "OUT_OF_SERVICE", in: "UP", want: "OUT_OF_SERVICE"},
		{section: "4.5 rule 4", name: "client OUT_OF_SERVICE over an UP lease stays UP", lease: "UP", in: "OUT_OF_SERVICE", want: "UP"},
		{section: "4.5 rule 4", name: "client UP over an OUT_OF_SERVICE lease stays OUT_OF_SERVICE", lease: "OUT_OF_SERVICE", in: "UP", want: "OUT_OF_SERVICE"},
		{section: "4.5 rule 4 (client calls only)", name: "replicated OUT_OF_SERVICE over an UP lease", repl: true, lease: "UP", in: "OUT_OF_SERVICE", want: "OUT_OF_SERVICE"},
		{section: "4.5 rule 4 (client calls only)", name: "replicated UP over an OUT_OF_SERVICE lease", repl: true, lease: "OUT_OF_SERVICE", in: "UP", want: "UP"},
		{section: "4.5 rule 4 (UP or OUT_OF_SERVICE only)", name: "a DOWN lease is not kept", lease: "DOWN", in: "UP", want: "UP"},
		{section: "4.5 rule 4 (UP or OUT_OF_SERVICE only)", name: "a STARTING lease is not kept", lease: "STARTING", in: "UP", want: "UP"},
		{section: "4.5 rule 4 (UP or OUT_OF_SERVICE only)", name: "re-registration UP after an override deleted to UNKNOWN", lease: "UNKNOWN", in: "UP", want: "UP"},
		{section: "4.5 rule 5", name: "a new client registration UP", in: "UP", want: "UP"},
		{section: "4.5 rule 5", name: "a new client registration OUT_OF_SERVICE", in: "OUT_OF_SERVICE", want: "OUT_OF_SERVICE"},

		// The registrant's overriddenStatus.
		{section: "4.2 step 5", name: "replicated overriddenStatus enters an empty map", repl: true, in: "UP", inOver: "OUT_OF_SERVICE", want: "OUT_OF_SERVICE", wantEntry: "OUT_OF_SERVICE"},
		{section: "4.2 step 5", name: "client overriddenStatus enters an empty map", in: "UP", inOver: "OUT_OF_SERVICE", want: "OUT_OF_SERVICE", wantEntry: "OUT_OF_SERVICE"},
		{section: "4.2 step 5", name: "an existing entry is kept and copied to the registrant", repl: true, lease: "OUT_OF_SERVICE", entry: "OUT_OF_SERVICE", in: "UP", inOver: "DOWN", want: "OUT_OF_SERVICE", wantEntry: "OUT_OF_SERVICE"},
		{section: "4.2 step 5 + 4.5 rule 1", name: "stored, but a self-reported DOWN still wins", in: "DOWN", inOver: "OUT_OF_SERVICE", want: "DOWN", wantEntry: "OUT_OF_SERVICE"},
		{section: "4.2 step 5", name: "an UNKNOWN overriddenStatus stores nothing", in: "UP", inOver: "UNKNOWN", want: "UP"},

		// Renew: rules against the stored instance and its own lease.
		{section: "4.3 step 2 / 4.5 rule 2", name: "client renew applies an override", renew: true, lease: "UP", entry: "OUT_OF_SERVICE", want: "OUT_OF_SERVICE"},
		{section: "4.3 step 2 / 4.5 rule 2", name: "replicated renew applies an override", renew: true, repl: true, lease: "UP", entry: "OUT_OF_SERVICE", want: "OUT_OF_SERVICE"},
		{section: "4.3 step 2 / 4.5 rule 2", name: "an UP override lifts an OUT_OF_SERVICE instance", renew: true, lease: "OUT_OF_SERVICE", entry: "UP", want: "UP"},
		{section: "4.3 step 2 / 4.5 rule 1", name: "a DOWN instance stays DOWN under an override", renew: true, lease: "DOWN", entry: "OUT_OF_SERVICE", want: "DOWN"},
		{section: "4.3 step 2 / 4.5 rule 4", name: "client renew keeps the instance's own status", renew: true, lease: "OUT_OF_SERVICE", want: "OUT_OF_SERVICE"},
		{section: "4.3 step 2 / 4.5 rule 5", name: "replicated renew keeps it too", renew: true, repl: true, lease: "OUT_OF_SERVICE", want: "OUT_OF_SERVICE"},
		{section: "4.3 step 2", name: "client renew of an UNKNOWN instance: 404", renew: true, lease: "UNKNOWN", want: "UNKNOWN", wantRenew: 404},
		{section: "4.3 step 2", name: "replicated renew of an UNKNOWN instance: 404", renew: true, repl: true, lease: "UNKNOWN", want: "UNKNOWN", wantRenew: 404},
		{section: "4.3 step 1", name: "renew without a lease: 404", renew: true, entry: "OUT_OF_SERVICE", wantRenew: 404},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			s, clock := newTestStore(t, Config{})
			if row.lease != "" {
				// A replicated registration of a new instance stores its
				// own status (rules 1 or 5).
				i := inst("A", "x")
				i.Status = status(t, row.lease)
				mustRegister(t, s, i, true)
				if got := holder(s, "A", "x").Status.String(); got != row.lease {
					t.Fatalf("setup: lease status %s, want %s", got, row.lease)
				}
			}
			if row.entry != "" {
				putOverride(s, "x", status(t, row.entry))
			}
			clock.Advance(time.Second)

			if row.renew {
				res, _ := s.Renew("A", "x", RenewRequest{Replication: row.repl})
				expectRow(t, row.section, "renew answer", renewCode(res), max(row.wantRenew, 200))
			} else {
				i := inst("A", "x")
				i.LastDirtyTimestamp = 2000 // newer than the lease's: this registrant is used
				i.Status = status(t, row.in)
				if row.inOver != "" {
					i.OverriddenStatus = status(t, row.inOver)
				}
				mustRegister(t, s, i, row.repl)
			}

			wantEntry := row.wantEntry
			if wantEntry == "" {
				wantEntry = row.entry
			}
			expectRow(t, row.section, "override entry", entryName(s, "x"), wantEntry)
			got := holder(s, "A", "x")
			if row.want == "" {
				if got != nil {
					t.Errorf("protocol doc %s: instance %+v, want none", row.section, got)
				}
				return
			}
			if got == nil {
				t.Fatalf("protocol doc %s: no instance, want one %s", row.section, row.want)
			}
			expectRow(t, row.section, "status", got.Status.String(), row.want)
			if !row.renew {
				// 4.2 step 5: the registrant carries the map's entry.
				wantOver := wantEntry
				if wantOver == "" {
					wantOver = "UNKNOWN"
				}
				expectRow(t, row.section, "overriddenStatus", got.OverriddenStatus.String(), wantOver)
			}
		})
	}
}

// statusEndpointRow is one call of PUT or DELETE apps/{app}/{id}/status on
// an UP instance registered with lastDirtyTimestamp 1000 (protocol doc 4.4,
// 2.2 (8) and (9)). Statuses are written by name; "" means none.
type statusEndpointRow struct {
	section string
	name    string
	prior   string // an override set before, with PUT .../status; "" none
	del     bool   // DELETE .../status instead of PUT
	id      string // the instance addressed; "" the registered one
	value   string // PUT: the status; DELETE: the fallback status
	dirty   int64  // the request's lastDirtyTimestamp; 0 none

	wantErr       error
	want          string // status afterwards
	wantOver      string // the instance's overriddenStatus afterwards
	wantEntry     string // the override map's entry afterwards; "" none
	wantDirty     int64  // the instance's lastDirtyTimestamp afterwards
	wantAction    eureka.ActionType
	wantChange    bool // the call recorded a change (a delta entry)
	wantNextRenew int  // the answer to the client's next heartbeat
}

// TestStatusEndpointsTable checks the status override endpoints (4.4): PUT
// sets the override unless the status is already the one asked for, DELETE
// removes it and falls back to the given status (UNKNOWN by default, which
// turns the next heartbeat into a 404), both keep the larger
// lastDirtyTimestamp, both renew the lease first, and both answer 404 for an
// unknown instance.
func TestStatusEndpointsTable(t *testing.T) {
	rows := []statusEndpointRow{
		{section: "4.4 StatusUpdate", name: "PUT OUT_OF_SERVICE sets the override", value: "OUT_OF_SERVICE",
			want: "OUT_OF_SERVICE", wantOver: "OUT_OF_SERVICE", wantEntry: "OUT_OF_SERVICE", wantDirty: 1000, wantAction: eureka.ActionModified, wantChange: true, wantNextRenew: 200},
		{section: "4.4 StatusUpdate / 3.7", name: "PUT adopts a larger lastDirtyTimestamp", value: "OUT_OF_SERVICE", dirty: 5000,
			want: "OUT_OF_SERVICE", wantOver: "OUT_OF_SERVICE", wantEntry: "OUT_OF_SERVICE", wantDirty: 5000, wantAction: eureka.ActionModified, wantChange: true, wantNextRenew: 200},
		{section: "4.4 StatusUpdate / 3.7", name: "PUT keeps a larger stored lastDirtyTimestamp", value: "OUT_OF_SERVICE", dirty: 500,
			want: "OUT_OF_SERVICE", wantOver: "OUT_OF_SERVICE", wantEntry: "OUT_OF_SERVICE", wantDirty: 1000, wantAction: eureka.ActionModified, wantChange: true, wantNextRenew: 200},
		{section: "4.4 StatusUpdate", name: "PUT of the current status stores nothing, not even the override", value: "UP",
			want: "UP", wantOver: "UNKNOWN", wantDirty: 1000, wantAction: eureka.ActionAdded, wantNextRenew: 200},
		{section: "4.4 StatusUpdate", name: "PUT UP replaces an OUT_OF_SERVICE override", prior: "OUT_OF_SERVICE", value: "UP",
			want: "UP", wantOver: "UP", wantEntry: "UP", wantDirty: 1000, wantAction: eureka.ActionModified, wantChange: true, wantNextRenew: 200},
		{section: "2.2 (8)", name: "PUT on an unknown instance: 404", id: "nope", value: "OUT_OF_SERVICE", wantErr: ErrNotFound},

		{section: "4.4 DeleteStatusOverride", name: "DELETE with value UP falls back to UP", prior: "OUT_OF_SERVICE", del: true, value: "UP",
			want: "UP", wantOver: "UNKNOWN", wantDirty: 1000, wantAction: eureka.ActionModified, wantChange: true, wantNextRenew: 200},
		{section: "4.4 DeleteStatusOverride / 4.5", name: "DELETE without a value: UNKNOWN, and the next heartbeat 404s", prior: "OUT_OF_SERVICE", del: true, value: "UNKNOWN",
			want: "UNKNOWN", wantOver: "UNKNOWN", wantDirty: 1000, wantAction: eureka.ActionModified, wantChange: true, wantNextRenew: 404},
		{section: "4.4 DeleteStatusOverride", name: "DELETE with value DOWN falls back to DOWN", prior: "OUT_OF_SERVICE", del: true, value: "DOWN",
			want: "DOWN", wantOver: "UNKNOWN", wantDirty: 1000, wantAction: eureka.ActionModified, wantChange: true, wantNextRenew: 200},
		{section: "4.4 DeleteStatusOverride / 3.7", name: "DELETE adopts a larger lastDirtyTimestamp", prior: "OUT_OF_SERVICE", del: true, value: "UP", dirty: 7000,
			want: "UP", wantOver: "UNKNOWN", wantDirty: 7000, wantAction: eureka.ActionModified, wantChange: true, wantNextRenew: 200},
		{section: "4.4 DeleteStatusOverride", name: "DELETE without an override changes nothing", del: true, value: "DOWN",
			want: "UP", wantOver: "UNKNOWN", wantDirty: 1000, wantAction: eureka.ActionAdded, wantNextRenew: 200},
		{section: "2.2 (9)", name: "DELETE on an unknown instance: 404", id: "nope", del: true, value: "UP", wantErr: ErrNotFound},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			s, clock := newTestStore(t, Config{})
			mustRegister(t, s, inst("A", "x"), false)
			if row.prior != "" {
				if err := s.SetStatus("A", "x", status(t, row.prior), 0, false); err != nil {
					t.Fatal(err)
				}
			}
			clock.Advance(10 * time.Second)
			id := row.id
			if id == "" {
				id = "x"
			}
			v := s.Version()
			var err error
			if row.del {
				err = s.DeleteStatusOverride("A", id, status(t, row.value), row.dirty, false)
			} else {
				err = s.SetStatus("A", id, status(t, row.value), row.dirty, false)
			}
			if row.wantErr != nil || err != nil {
				if !errors.Is(err, row.wantErr) {
					t.Errorf("protocol doc %s: error %v, want %v", row.section, err, row.wantErr)
				}
				return
			}
			got := holder(s, "A", "x")
			expectRow(t, row.section, "status", got.Status.String(), row.want)
			expectRow(t, row.section, "overriddenStatus", got.OverriddenStatus.String(), row.wantOver)
			expectRow(t, row.section, "override entry", entryName(s, "x"), row.wantEntry)
			expectRow(t, row.section, "lastDirtyTimestamp", got.LastDirtyTimestamp, row.wantDirty)
			expectRow(t, row.section, "actionType", got.ActionType, row.wantAction)
			expectRow(t, row.section, "recorded a change", s.Version() != v, row.wantChange)
			expectRow(t, row.section, "lease renewed (lastRenewalTimestamp)", got.LeaseInfo.LastRenewalTimestamp, clock.Now().UnixMilli())
			res, _ := s.Renew("A", "x", RenewRequest{})
			expectRow(t, row.section, "next heartbeat", renewCode(res), row.wantNextRenew)
		})
	}
}

// overrideExpiryRow is an override set at minute 0 on an instance that
// client renews at the given times read, and a check at checkAt.
type overrideExpiryRow struct {
	section string
	name    string
	renews  []time.Duration // when client renews read the entry
	checkAt time.Duration
	alive   bool
}

// TestOverrideIdleExpiryTable checks that an override map entry expires one
// hour after its last access (4.1, 4.13), and that each renew, whose rules
// read the entry, counts as an access. While the entry lives a replicated
// UP registration stays OUT_OF_SERVICE (4.5 rule 2); once it is gone the
// registration's own UP is used (rule 5).
func TestOverrideIdleExpiryTable(t *testing.T) {
	rows := []overrideExpiryRow{
		{section: "4.1 / 4.13", name: "idle 59 min: kept", checkAt: 59 * time.Minute, alive: true},
		{section: "4.1 / 4.13", name: "idle 1 h + 1 ms: dropped", checkAt: time.Hour + time.Millisecond},
		{section: "4.1 / 4.13", name: "idle 3 h: dropped", checkAt: 3 * time.Hour},
		{section: "4.1 / 4.13", name: "a renew at 59 min restarts the hour", renews: []time.Duration{59 * time.Minute}, checkAt: 118 * time.Minute, alive: true},
		{section: "4.1 / 4.13", name: "1 h + 1 ms after the last renew: dropped", renews: []time.Duration{59 * time.Minute}, checkAt: 119*time.Minute + time.Millisecond},
		{section: "4.1 / 4.13", name: "renews every 30 min keep it for hours",
			renews: []time.Duration{30 * time.Minute, 60 * time.Minute, 90 * time.Minute, 120 * time.Minute, 150 * time.Minute}, checkAt: 209 * time.Minute, alive: true},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			s, clock := newTestStore(t, Config{})
			mustRegister(t, s, inst("A", "x"), false)
			if err := s.SetStatus("A", "x", eureka.StatusOutOfService, 0, false); err != nil {
				t.Fatal(err)
			}
			start := clock.Now()
			for _, at := range row.renews {
				clock.Advance(start.Add(at).Sub(clock.Now()))
				s.Renew("A", "x", RenewRequest{})
			}
			clock.Advance(start.Add(row.checkAt).Sub(clock.Now()))
			s.PurgeDeltas() // the 30 s task drops expired entries too
			wantEntry, wantStatus := "", "UP"
			if row.alive {
				wantEntry, wantStatus = "OUT_OF_SERVICE", "OUT_OF_SERVICE"
			}
			expectRow(t, row.section, "override entry", entryName(s, "x"), wantEntry)
			mustRegister(t, s, inst("A", "x"), true)
			expectRow(t, row.section, "status after a replicated UP registration", holder(s, "A", "x").Status.String(), wantStatus)
		})
	}
}
