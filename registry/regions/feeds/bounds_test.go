package feeds_test

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/eurekagate/eurekagate/internal/testkit"
	"github.com/eurekagate/eurekagate/registry"
	"github.com/eurekagate/eurekagate/registry/regions"
	"github.com/eurekagate/eurekagate/registry/regions/feeds"
)

// startBoundFeeds is startFeeds with cfg's bounds and fetch interval.
func startBoundFeeds(t *testing.T, store *registry.Store, cfg feeds.Config, urls ...string) {
	t.Helper()
	cfg.Remotes = []feeds.Remote{{Name: region, URLs: urls}}
	f, err := feeds.New(store, cfg)
	if err != nil {
		t.Fatal(err)
	}
	f.Start()
	testkit.StopOnCleanupChecked(t, 5*time.Second, f.Stop)
}

// waitRefused waits for the region's state to say why its last read was
// refused.
func waitRefused(t *testing.T, store *registry.Store, want string) {
	t.Helper()
	testkit.Eventually(t, 10*time.Second, "the region's state to say "+want, func() bool {
		return strings.Contains(state(store).LastError, want)
	})
}

// A region whose registry grows past MaxRegionInstances is refused, its
// last registry within the bound kept, and taken again once it is back
// within it.
func TestRegionOverMaxInstancesIsRefused(t *testing.T) {
	rs := registry.New(registry.Config{})
	for i := range 3 {
		testkit.MustRegister(t, rs, testkit.Inst("ORDERS", fmt.Sprintf("o%d", i)), false)
	}
	r := startRemote(t, "127.0.0.1:0", rs)
	local := localStore(t, testkit.NewFakeClock())
	startBoundFeeds(t, local, feeds.Config{MaxRegionInstances: 5, FetchInterval: 200 * time.Millisecond}, r.URL())
	waitInstances(t, local, "ORDERS", "o0,o1,o2")

	for i := 3; i < 9; i++ {
		testkit.MustRegister(t, rs, testkit.Inst("ORDERS", fmt.Sprintf("o%d", i)), false)
	}
	waitRefused(t, local, "more than the 5 allowed; the last registry is kept")
	st := state(local)
	if !strings.Contains(st.LastError, "MaxRegionInstances (5)") || st.Instances > 5 || st.Instances < 3 || !st.Ready {
		t.Errorf("state %+v, want ready with the last registry of 3 to 5 instances and an error naming MaxRegionInstances", st)
	}
	if n := len(regions.MirrorOf(local).InstancesIn("ORDERS", region)); n != st.Instances {
		t.Errorf("%d instances served, state says %d", n, st.Instances)
	}

	for i := 5; i < 9; i++ {
		rs.Cancel("ORDERS", fmt.Sprintf("o%d", i), false)
	}
	waitInstances(t, local, "ORDERS", "o0,o1,o2,o3,o4")
	testkit.Eventually(t, 10*time.Second, "the error cleared", func() bool { return state(local).LastError == "" })
}

// A region that answers more than MaxRegionBytes is refused, its last
// registry kept.
func TestRegionOverMaxBytesIsRefused(t *testing.T) {
	rs := registry.New(registry.Config{})
	testkit.MustRegister(t, rs, testkit.Inst("ORDERS", "o1"), false)
	r := startRemote(t, "127.0.0.1:0", rs)
	local := localStore(t, testkit.NewFakeClock())
	startBoundFeeds(t, local, feeds.Config{MaxRegionBytes: 16 << 10, FetchInterval: 200 * time.Millisecond}, r.URL())
	waitInstances(t, local, "ORDERS", "o1")

	big := testkit.Inst("ORDERS", "o2")
	big.Metadata = map[string]string{"filler": strings.Repeat("x", 32<<10)}
	testkit.MustRegister(t, rs, big, false)
	waitRefused(t, local, "over the limit of 16384 bytes (raise MaxRegionBytes to read it); the region's answer is refused")
	t.Logf("the region's state: %s", state(local).LastError)
	if n := strings.Count(state(local).LastError, "MaxRegionBytes"); n != 1 {
		t.Errorf("the region's state names MaxRegionBytes %d times, want once", n)
	}
	if got := ids(regions.MirrorOf(local).InstancesIn("ORDERS", region)); got != "o1" {
		t.Errorf("instances %q, want the last registry's o1", got)
	}
}

// hostileRegion answers every read with a registry of n instances of one
// app, as small as an instance can be written (the 447k
// instances were 60 MB of JSON).
func hostileRegion(t *testing.T, n int) string {
	t.Helper()
	var b bytes.Buffer
	b.WriteString(`{"applications":{"versions__delta":"1","apps__hashcode":"UP_` + fmt.Sprint(n) + `_","application":[{"name":"X","instance":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"instanceId":"i%d","app":"X","hostName":"h","ipAddr":"10.0.0.1","status":"UP","port":{"$":80,"@enabled":"true"}}`, i)
	}
	b.WriteString(`]}]}}`)
	doc := b.Bytes()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write(doc)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/eureka/"
}

// A region of 150,000 small instances (17 MB of JSON, within
// MaxRegionBytes) over a MaxRegionInstances of 1,000 is refused as the
// decoder reaches the 1,001st instance: the heap, measured at its peak
// while the feed reads, fetches and refuses it, grows by the answer's
// bytes (read into a growing buffer) and 1,000 instances, not by the
// 150,000 instances a decode of the whole registry before the count
// cost.
func TestHostileRegionIsRefusedWithinItsBound(t *testing.T) {
	url := hostileRegion(t, 150_000)
	local := localStore(t, testkit.NewFakeClock())
	growth := testkit.HeapGrowth(func() {
		startBoundFeeds(t, local, feeds.Config{FetchInterval: time.Minute, MaxRegionInstances: 1_000}, url)
		waitRefused(t, local, "more than the 1000 allowed")
	})
	if st := state(local); st.Ready || st.Instances != 0 || !strings.Contains(st.LastError, "MaxRegionInstances (1000)") {
		t.Errorf("state %+v, want not ready, no instance, an error naming MaxRegionInstances", st)
	}
	const bound = 62 << 20 // under the whole registry's decode (CHANGELOG)
	t.Logf("the heap grew by %d MB at its peak while the region was read and refused", growth>>20)
	if growth > bound {
		t.Errorf("the heap grew by %d MB at its peak while the region was read and refused, want at most %d MB", growth>>20, bound>>20)
	}
}
