package replication_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/eurekagate/eurekagate/registry"
	"github.com/eurekagate/eurekagate/registry/replication"
)

// A peer answering the start-up sync with a gzip bomb is refused at the
// size limit: nothing is adopted and memory stays bounded.
func TestSyncRefusesGzipBomb(t *testing.T) {
	var bomb bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&bomb, gzip.BestCompression)
	zero := make([]byte, 1<<20)
	for range 256 { // 256 MiB of zeros
		zw.Write(zero)
	}
	zw.Close()
	peer := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Encoding", "gzip")
		w.Header().Set("Content-Type", "application/json")
		w.Write(bomb.Bytes())
	}))
	defer peer.Close()
	s := registry.New(registry.Config{})
	p, err := replication.New(s, replication.Config{Peers: []string{peer.URL + "/eureka/"}, MaxResponseBytes: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop()
	if n := p.SyncFrom(context.Background()); n != 0 || s.Len() != 0 {
		t.Fatalf("synced %d instances from a gzip bomb", n)
	}
}
