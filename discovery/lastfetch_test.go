package discovery

import (
	"net/http"
	"testing"
	"time"
)

// LastFetch reports the time of the last fetch that got an answer (a full
// fetch, a delta, a watch), on the client's clock, and the error of a
// failed attempt after it until the next success.
func TestLastFetchAfterSuccessAndFailure(t *testing.T) {
	clk := newFakeClock()
	f := newFakeEureka(t)
	f.full = netflixApps("1", "UP_1_", inApp("ORDERS", "h1", "UP", "ADDED"))
	c := newRegionClient(t, f, Config{clock: clk})
	if at, err := c.LastFetch(); !at.IsZero() || err != nil {
		t.Fatalf("before any fetch: %v, %v", at, err)
	}

	mustRefresh(t, c)
	t0 := clk.Now()
	if at, err := c.LastFetch(); !at.Equal(t0) || err != nil {
		t.Fatalf("after a full fetch: %v, %v; want %v, nil", at, err, t0)
	}

	clk.Advance(time.Minute)
	f.set(func(f *fakeEureka) { f.deltaStatus = http.StatusInternalServerError })
	refreshErr := c.Refresh()
	if refreshErr == nil {
		t.Fatal("a refresh against a 500 succeeded")
	}
	if at, err := c.LastFetch(); !at.Equal(t0) || err != refreshErr {
		t.Fatalf("after a failure: %v, %v; want %v, %v", at, err, t0, refreshErr)
	}

	clk.Advance(time.Minute)
	f.set(func(f *fakeEureka) {
		f.deltaStatus = http.StatusOK
		f.deltas = []string{netflixApps("2", "UP_1_", nil...), netflixApps("3", "UP_1_", nil...)}
		f.headers = map[string]string{headerWatch: "1", headerVersion: "v2"}
	})
	mustRefresh(t, c)
	if at, err := c.LastFetch(); !at.Equal(t0.Add(2*time.Minute)) || err != nil {
		t.Fatalf("after a delta: %v, %v", at, err)
	}

	// A watch's answer, even one with no change, is a fetch.
	clk.Advance(time.Minute)
	mustWatch(t, c)
	if at, err := c.LastFetch(); !at.Equal(t0.Add(3*time.Minute)) || err != nil {
		t.Fatalf("after a watch: %v, %v", at, err)
	}
}

// The fetch loop records its failures too.
func TestLastFetchFromTheFetchLoop(t *testing.T) {
	clk := newFakeClock()
	f := newFakeEureka(t)
	f.full = netflixApps("1", "UP_1_", inApp("ORDERS", "h1", "UP", "ADDED"))
	c := newRegionClient(t, f, Config{DisableWatch: true, clock: clk})
	c.Start()
	defer stopClient(t, c)
	<-c.Ready()
	clk.settle(t, 0, 1)
	t0 := clk.Now()
	if at, err := c.LastFetch(); !at.Equal(t0) || err != nil {
		t.Fatalf("after the first fetch: %v, %v", at, err)
	}

	f.set(func(f *fakeEureka) { f.deltaStatus = http.StatusInternalServerError; f.full = "not json" })
	armed, _ := clk.state()
	clk.Advance(30 * time.Second)
	clk.settle(t, armed, 1)
	if at, err := c.LastFetch(); !at.Equal(t0) || err == nil {
		t.Fatalf("after a failed poll: %v, %v; want %v and an error", at, err, t0)
	}

	f.set(func(f *fakeEureka) {
		f.deltaStatus = http.StatusOK
		f.deltas = []string{netflixApps("2", "UP_1_", nil...)}
	})
	armed, _ = clk.state()
	clk.Advance(30 * time.Second)
	clk.settle(t, armed, 1)
	if at, err := c.LastFetch(); !at.Equal(t0.Add(time.Minute)) || err != nil {
		t.Fatalf("after a poll that succeeded: %v, %v", at, err)
	}
}
