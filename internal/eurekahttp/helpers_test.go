package eurekahttp

import (
	"bytes"
	"compress/gzip"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/eurekagate/eurekagate/eureka"
	"github.com/eurekagate/eurekagate/internal/testkit"
)

func TestMain(m *testing.M) { testkit.VerifyTestMain(m) }

// fakeServer is a loopback HTTP server that counts its requests and answers
// with a status that a test can change.
type fakeServer struct {
	srv    *httptest.Server
	hits   atomic.Int32
	status atomic.Int32
	body   string
}

func newFakeServer(t *testing.T, status int, body string) *fakeServer {
	t.Helper()
	f := &fakeServer{body: body}
	f.status.Store(int32(status))
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.hits.Add(1)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(int(f.status.Load()))
		w.Write([]byte(f.body))
	}))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeServer) url() string { return f.srv.URL + "/eureka/" }

// refusedURL is a service URL on a loopback port where nothing listens.
func refusedURL(t *testing.T) string {
	t.Helper()
	return "http://" + testkit.FreeAddr(t) + "/eureka/"
}

// hungServer accepts connections and never answers. It returns its service
// URL and the number of connections accepted so far.
func hungServer(t *testing.T) (string, func() int) {
	t.Helper()
	var (
		mu    sync.Mutex
		conns []net.Conn
	)
	t.Cleanup(func() { // runs after the server has stopped accepting
		for _, c := range conns {
			c.Close()
		}
	})
	addr := testkit.RawServer(t, func(c net.Conn) {
		mu.Lock()
		conns = append(conns, c)
		mu.Unlock()
	})
	return "http://" + addr.String() + "/eureka/", func() int {
		mu.Lock()
		defer mu.Unlock()
		return len(conns)
	}
}

func parse(t *testing.T, raw string) eureka.ServiceURL {
	t.Helper()
	u, err := eureka.ParseServiceURL(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func parseAll(t *testing.T, raws ...string) []eureka.ServiceURL {
	t.Helper()
	out := make([]eureka.ServiceURL, len(raws))
	for n, raw := range raws {
		out[n] = parse(t, raw)
	}
	return out
}

func newClient(t *testing.T, cfg Config) *Client {
	t.Helper()
	c := NewClient(cfg)
	t.Cleanup(c.Close)
	return c
}

func gzipped(t *testing.T, data []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// gzipBomb is a gzip stream of about mib KiB that decodes to mib MiB of
// zeros: one compressed MiB repeated as gzip members.
func gzipBomb(t *testing.T, mib int) []byte {
	t.Helper()
	var member bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&member, gzip.BestCompression)
	zw.Write(make([]byte, 1<<20))
	zw.Close()
	return bytes.Repeat(member.Bytes(), mib)
}
