package gatewaysuite

import (
	"testing"
	"time"

	"github.com/eurekagate/eurekagate/internal/testkit"
)

// subsetBreakerReason is the body of BREAKER-SUBSET's canary's 503 while
// its breaker is open.
const subsetBreakerReason = "circuit open: BREAKER-SUBSET's subset version=canary is failing, its requests are refused for 300ms before 1 probes\n"

// An app with a stable subset (its instance answers 200) and a canary
// subset chosen by X-Canary: 1 (its instance answers 500), its breaker
// per_subset (min_requests 4, open 300ms, 1 probe): the canary's
// failures open the canary's breaker alone; its requests then get the
// 503 naming the subset and reach no instance (none is sent to the
// stable subset), while the stable subset's requests keep getting 200
// from the stable instance. Once the canary's instance recovers, a
// single probe reaches it and closes the breaker. The metrics have the
// canary's breaker under its subset label, and none of the app's own.
func breakerPerSubset(t *testing.T, start Starter) {
	base, store, m := start(t)
	stable := countingInstance{arrivals: make(chan struct{}, 1)}
	stable.status.Store(200)
	canary := countingInstance{arrivals: make(chan struct{}, 1)}
	canary.status.Store(500)
	register(t, store, versionInstance("breaker-subset", "stable", newBackend(t, "stable", &stable).port))
	register(t, store, versionInstance("breaker-subset", "canary", newBackend(t, "canary", &canary).port))
	url := base + "/breaker-subset/x"
	c := keepAlive(t)
	toCanary := []string{"X-Canary", "1"}
	for range 4 {
		expectStatuses(t, "the canary's failures", statuses(t, c, url, 1, toCanary...), 500)
		expectStatuses(t, "the stable subset beside them", statuses(t, c, url, 1), 200)
	}
	r, err := ask(c, url, toCanary...)
	if err != nil {
		t.Fatal(err)
	}
	if r.status != 503 || r.body != subsetBreakerReason || r.header.Get("Eurekagate-Reason") != "circuit open" {
		t.Fatalf("the canary once open: %d %q %v", r.status, r.body, r.header)
	}
	refused := 1
	expectStatuses(t, "the stable subset while the canary's breaker is open", statuses(t, c, url, 5), 200, 200, 200, 200, 200)
	if got := canary.got.Load(); got != 4 {
		t.Fatalf("the canary's instance got %d requests, want the 4 before its breaker opened", got)
	}
	if got := stable.got.Load(); got != 9 {
		t.Fatalf("the stable instance got %d requests, want its own 9 (none of the canary's)", got)
	}
	s := m.read(t)
	if got := s.sum("breaker_state", "app", "BREAKER-SUBSET", "subset", "version=canary"); got != 1 {
		t.Errorf("the canary's breaker_state %v, want 1 (open)", got)
	}
	if got := s.sum("breaker_transitions_total", "app", "BREAKER-SUBSET", "subset", ""); got != 0 {
		t.Errorf("the app's own breaker moved %v times, want none", got)
	}

	// The canary recovers: the requests refused while open reach nothing;
	// once open has passed, the one probe reaches the instance and closes
	// the breaker.
	canary.status.Store(200)
	testkit.Eventually(t, 10*time.Second, "the canary's probe", func() bool {
		before := canary.got.Load()
		r, err := ask(c, url, toCanary...)
		switch {
		case err != nil:
			t.Fatal(err)
		case r.status == 503 && canary.got.Load() == before:
			refused++
			return false
		case r.status != 200:
			t.Fatalf("the canary while open: %d %q, its instance got %d then %d", r.status, r.body, before, canary.got.Load())
		}
		return true
	})
	if got := canary.got.Load(); got != 5 {
		t.Fatalf("the canary's instance got %d requests, want 4 and the probe", got)
	}
	expectStatuses(t, "the canary closed", statuses(t, c, url, 3, toCanary...), 200, 200, 200)
	expectStatuses(t, "the stable subset", statuses(t, c, url, 2), 200, 200)
	s = m.read(t)
	for to, want := range map[string]float64{"open": 1, "half_open": 1, "closed": 1} {
		if got := s.sum("breaker_transitions_total", "app", "BREAKER-SUBSET", "subset", "version=canary", "to", to); got != want {
			t.Errorf("the canary's breaker_transitions_total to %s: %v, want %v", to, got, want)
		}
	}
	if got := s.sum("breaker_rejected_total", "app", "BREAKER-SUBSET", "subset", "version=canary"); got != float64(refused) {
		t.Errorf("the canary's breaker_rejected_total %v, want %d", got, refused)
	}
	if got := s.sum("breaker_state", "app", "BREAKER-SUBSET"); got != 0 {
		t.Errorf("breaker_state %v, want every breaker of the app closed", got)
	}
}
