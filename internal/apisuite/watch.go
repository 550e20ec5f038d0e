package apisuite

import (
	"strings"
	"testing"
	"time"

	"github.com/eurekagate/eurekagate/eureka"
	"github.com/eurekagate/eurekagate/internal/testkit"
	"github.com/eurekagate/eurekagate/registry"
	"github.com/eurekagate/eurekagate/registry/httpapi"
)

// watch: every response advertises the watch; a watch answers at once when
// there are newer changes, holds the request until one arrives otherwise,
// sends only the changes after the version (of the apps named), and
// answers 410 for a version the node cannot answer for.
func watch(t *testing.T, start Starter) {
	base, store := start(t, registry.Config{}, httpapi.APIConfig{})
	api := base + "/eureka/"
	register(t, base, "orders", "o1")
	full := call(t, "GET", api+"apps/", nil, "Accept", jsonCT)
	testkit.Want(t, "capability header", full.header.Get(httpapi.HeaderWatch), httpapi.WatchVersion)
	token := full.header.Get(httpapi.HeaderVersion)
	if token == "" {
		t.Fatal("a full fetch carries no version")
	}

	// Nothing newer: held until the wait ends, then an empty delta at the
	// same version.
	r := call(t, "GET", api+"apps/delta?watch="+token+"&wait=0.05", nil, "Accept", jsonCT)
	testkit.Want(t, "idle watch status", r.status, 200)
	testkit.Want(t, "idle watch version", r.header.Get(httpapi.HeaderVersion), token)
	if doc, err := eureka.DecodeApplicationsJSON([]byte(r.body)); err != nil || len(doc.Applications) != 0 {
		t.Fatalf("idle watch answered %v %q", err, r.body)
	}

	// A watch waiting when a registration happens returns it.
	got := make(chan reply, 1)
	go func() { got <- call(t, "GET", api+"apps/delta?watch="+token+"&wait=20", nil, "Accept", jsonCT) }()
	// Held before the registration, so that the registration is what
	// wakes it.
	testkit.Eventually(t, 10*time.Second, "the watch is held", func() bool { return store.Stats().Totals().WatchesHeld == 1 })
	register(t, base, "billing", "b1")
	select {
	case r = <-got:
	case <-time.After(15 * time.Second):
		t.Fatal("the watch did not return after a registration")
	}
	doc, err := eureka.DecodeApplicationsJSON([]byte(r.body))
	if err != nil || len(doc.Applications) != 1 || doc.Applications[0].Instances[0].ID() != "b1" ||
		doc.Applications[0].Instances[0].ActionType != eureka.ActionAdded {
		t.Fatalf("watch after a registration: %v %q", err, r.body)
	}
	testkit.Want(t, "watch hash", doc.AppsHashcode, "UP_2_")
	next := r.header.Get(httpapi.HeaderVersion)
	if next == token || next == "" {
		t.Fatalf("version did not move: %q -> %q", token, next)
	}

	// Interest: a watch of ORDERS does not return for a change to BILLING,
	// but its version moves past it when the wait ends.
	register(t, base, "billing", "b2")
	r = call(t, "GET", api+"apps/delta?watch="+next+"&wait=0.1&apps=orders", nil, "Accept", jsonCT)
	if doc, err := eureka.DecodeApplicationsJSON([]byte(r.body)); err != nil || len(doc.Applications) != 0 || doc.AppsHashcode != "UP_1_" {
		t.Fatalf("watch of ORDERS after a BILLING change: %v %q", err, r.body)
	}
	if r.header.Get(httpapi.HeaderVersion) == next {
		t.Error("an interest watch did not move past other apps' changes")
	}
	// A cancel reaches a watch of its app, as DELETED.
	call(t, "DELETE", api+"apps/ORDERS/o1", nil)
	r = call(t, "GET", api+"apps/delta?watch="+next+"&wait=1&apps=ORDERS", nil, "Accept", jsonCT)
	if doc, err := eureka.DecodeApplicationsJSON([]byte(r.body)); err != nil || len(doc.Applications) != 1 ||
		doc.Applications[0].Instances[0].ActionType != eureka.ActionDeleted {
		t.Fatalf("watch of ORDERS after its cancel: %v %q", err, r.body)
	}
	// The full fetch of an interest.
	r = call(t, "GET", api+"apps/?apps=BILLING", nil, "Accept", jsonCT)
	if doc, err := eureka.DecodeApplicationsJSON([]byte(r.body)); err != nil || len(doc.Applications) != 1 || doc.Applications[0].Name != "BILLING" {
		t.Fatalf("full fetch of BILLING: %v %q", err, r.body)
	}

	// Versions of another node or run, and malformed ones, get 410.
	for _, bad := range []string{"1.1", "x", strings.Replace(token, ".", ".9", 1) + "99"} {
		if r := call(t, "GET", api+"apps/delta?watch="+bad+"&wait=0", nil); r.status != 410 {
			t.Errorf("watch=%s: %d, want 410", bad, r.status)
		}
	}
	if r := call(t, "GET", api+"apps/delta?watch="+token+"&wait=soon", nil); r.status != 400 {
		t.Errorf("wait=soon: %d, want 400", r.status)
	}
}
