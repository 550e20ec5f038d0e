package discovery

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/eurekagate/eurekagate/eureka"
	"github.com/eurekagate/eurekagate/internal/testkit"
	"github.com/eurekagate/eurekagate/registry"
)

func hasID(list []*eureka.InstanceInfo, id string) bool {
	return slices.ContainsFunc(list, func(i *eureka.InstanceInfo) bool { return i.ID() == id })
}

// With default settings (a 30 s fetch interval), every registration,
// OUT_OF_SERVICE and cancel reaches the client's registry through the
// watch, within a few seconds each, and Subscribe fires for each.
func TestWatchDeliversEveryChangeWithDefaults(t *testing.T) {
	s := startOurServer(t, "127.0.0.1:0")
	testkit.MustRegister(t, s.Store, testkit.Inst("ORDERS", "seed"), false)
	c := newFetchOnly(t, s.URL())
	c.Start()
	defer stopClient(t, c)
	<-c.Ready()
	changes := c.Changed()
	for k := range 10 {
		id := "o" + string(rune('a'+k))
		testkit.MustRegister(t, s.Store, testkit.Inst("ORDERS", id), false)
		testkit.Eventually(t, 5*time.Second, "registration of "+id, func() bool { return hasID(c.Instances("ORDERS"), id) })
		s.Store.SetStatus("ORDERS", id, eureka.StatusOutOfService, 0, false)
		testkit.Eventually(t, 5*time.Second, "OUT_OF_SERVICE of "+id, func() bool { return !hasID(c.Instances("ORDERS"), id) })
		s.Store.Cancel("ORDERS", id, false)
		testkit.Eventually(t, 5*time.Second, "cancel of "+id, func() bool { return !hasID(c.AllInstances("ORDERS"), id) })
	}
	select {
	case <-changes:
	default:
		t.Error("Changed did not fire")
	}
	if !c.watchable() {
		t.Error("the client does not watch a server that offers it")
	}
}

// A client that names its apps holds only them, and learns of their
// changes; one that learns its apps fetches an app the first time it is
// asked for.
func TestWatchInterest(t *testing.T) {
	s := startOurServer(t, "127.0.0.1:0")
	testkit.MustRegister(t, s.Store, testkit.Inst("ORDERS", "o1"), false)
	testkit.MustRegister(t, s.Store, testkit.Inst("BILLING", "b1"), false)

	named, err := New(Config{ServiceURLs: []string{s.URL()}, Apps: []string{"orders"}})
	if err != nil {
		t.Fatal(err)
	}
	named.Start()
	defer stopClient(t, named)
	<-named.Ready()
	if !hasID(named.Instances("ORDERS"), "o1") || named.AllInstances("BILLING") != nil {
		t.Fatalf("interest ORDERS holds %v", named.Applications().Applications)
	}
	testkit.MustRegister(t, s.Store, testkit.Inst("BILLING", "b2"), false)
	testkit.MustRegister(t, s.Store, testkit.Inst("ORDERS", "o2"), false)
	testkit.Eventually(t, 5*time.Second, "ORDERS change", func() bool { return hasID(named.Instances("ORDERS"), "o2") })
	if named.AllInstances("BILLING") != nil {
		t.Error("a change to BILLING reached a client interested in ORDERS only")
	}

	learner, err := New(Config{ServiceURLs: []string{s.URL()}, LearnApps: true})
	if err != nil {
		t.Fatal(err)
	}
	learner.Start()
	defer stopClient(t, learner)
	<-learner.Ready()
	if learner.Instances("BILLING") != nil {
		t.Fatal("a learning client held BILLING before it was asked for")
	}
	testkit.Eventually(t, 5*time.Second, "BILLING learned", func() bool { return hasID(learner.Instances("BILLING"), "b2") })
	if learner.AllInstances("ORDERS") != nil && learner.watch.interest() == nil {
		t.Error("interest lost")
	}
	testkit.MustRegister(t, s.Store, testkit.Inst("BILLING", "b3"), false)
	testkit.Eventually(t, 5*time.Second, "BILLING change", func() bool { return hasID(learner.Instances("BILLING"), "b3") })
}

// When the client fails over to another node, whose versions are not
// comparable, the node answers 410 and the client reads the whole registry
// there.
func TestWatchFailoverRereadsTheRegistry(t *testing.T) {
	a := startOurServer(t, "127.0.0.1:0")
	b := startOurServer(t, "127.0.0.1:0")
	testkit.MustRegister(t, a.Store, testkit.Inst("ORDERS", "on-a"), false)
	testkit.MustRegister(t, b.Store, testkit.Inst("ORDERS", "on-b"), false)
	c, err := New(Config{ServiceURLs: []string{a.URL(), b.URL()}, DisablePreferSameZone: true, WatchWait: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	c.Start()
	defer stopClient(t, c)
	<-c.Ready()
	first := "on-a"
	if hasID(c.Instances("ORDERS"), "on-b") {
		first = "on-b"
		a, b = b, a
	}
	a.Stop()
	testkit.Eventually(t, 10*time.Second, "the other node's registry", func() bool {
		list := c.Instances("ORDERS")
		return len(list) == 1 && list[0].ID() != first
	})
	// And it watches there.
	testkit.MustRegister(t, b.Store, testkit.Inst("ORDERS", "new-on-b"), false)
	testkit.Eventually(t, 5*time.Second, "a change on the other node", func() bool { return hasID(c.Instances("ORDERS"), "new-on-b") })
}

// Against a server that does not advertise the watch, the client polls as
// before and never sends the extension's parameters.
func TestNoWatchAgainstAPlainServer(t *testing.T) {
	f := newFakeEureka(t)
	f.set(func(f *fakeEureka) { f.full = netflixApps("1", "UP_1_", inApp("A", "h1", "UP", "ADDED")) })
	c, err := New(Config{ServiceURLs: []string{f.url()}, RegistryFetchInterval: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	c.Start()
	<-c.Ready()
	testkit.Eventually(t, 5*time.Second, "a few polls", func() bool { _, deltas := f.calls(); return deltas >= 3 })
	stopClient(t, c)
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, q := range f.queries {
		if strings.Contains(q, "watch") || strings.Contains(q, "apps=") {
			t.Errorf("a plain server got %q", q)
		}
	}
}

// A client interested in more apps than our servers take in a list reads
// the whole registry instead of being refused at every read.
func TestLongInterestReadsTheWholeRegistry(t *testing.T) {
	if maxInterestNames != registry.MaxQueryListNames || maxInterestBytes != registry.MaxQueryListBytes {
		t.Fatalf("the client's bounds %d names, %d bytes are not the server's %d, %d",
			maxInterestNames, maxInterestBytes, registry.MaxQueryListNames, registry.MaxQueryListBytes)
	}
	s := startOurServer(t, "127.0.0.1:0")
	testkit.MustRegister(t, s.Store, testkit.Inst("A17", "o1"), false)
	for _, apps := range []string{testkit.NameList("A", maxInterestNames+1), testkit.NameList("AN-APPLICATION-NAME-", 2000)} {
		c, err := New(Config{ServiceURLs: []string{s.URL()}, Apps: strings.Split(apps, ",")})
		if err != nil {
			t.Fatal(err)
		}
		c.Start()
		testkit.Eventually(t, 5*time.Second, "A17's instance read", func() bool { return hasID(c.Instances("A17"), "o1") })
		stopClient(t, c)
	}
}
