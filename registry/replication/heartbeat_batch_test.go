package replication_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/eurekagate/eurekagate/internal/testkit"
	"github.com/eurekagate/eurekagate/registry"
	"github.com/eurekagate/eurekagate/registry/replication"
)

// Heartbeats wait for their batch, and the next other write takes them
// along at once: 200 heartbeats and a registration reach the peer in one
// request, however long the heartbeats alone would have waited.
func TestHeartbeatsTravelInBatches(t *testing.T) {
	var mu sync.Mutex
	var batches [][]replication.Item
	peer := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.WriteHeader(http.StatusOK) // the sender's who-are-you read
			return
		}
		body, _ := io.ReadAll(r.Body)
		items, err := replication.DecodeBatch(body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		mu.Lock()
		batches = append(batches, items)
		mu.Unlock()
		results := make([]replication.Result, len(items))
		for n := range results {
			results[n].StatusCode = http.StatusOK
		}
		w.Write(replication.AppendResults(nil, results))
	}))
	defer peer.Close()
	s := registry.New(registry.Config{})
	for k := range 200 {
		testkit.MustRegister(t, s, testkit.SampleInstance(k), true) // replicated: nothing to send
	}
	p, err := replication.New(s, replication.Config{Peers: []string{peer.URL + "/eureka/"}, HeartbeatBatchDelay: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	p.Start()
	defer p.Stop()
	for k := range 200 {
		i := testkit.SampleInstance(k)
		if res, _ := s.Renew(i.App, i.InstanceID, registry.RenewRequest{}); res != registry.RenewOK {
			t.Fatal(res)
		}
	}
	testkit.MustRegister(t, s, testkit.Inst("ORDERS", "now"), false)
	testkit.Eventually(t, 5*time.Second, "the registration at the peer", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(batches) > 0
	})
	mu.Lock()
	defer mu.Unlock()
	if len(batches) != 1 || len(batches[0]) != 201 {
		sizes := ""
		for _, b := range batches {
			sizes += " " + strconv.Itoa(len(b))
		}
		t.Fatalf("batches of%s items, want one of the 200 heartbeats and the registration", sizes)
	}
}
