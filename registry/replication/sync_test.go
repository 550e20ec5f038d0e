package replication_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/eurekagate/eurekagate/eureka"
	"github.com/eurekagate/eurekagate/internal/testkit"
	"github.com/eurekagate/eurekagate/registry"
	"github.com/eurekagate/eurekagate/registry/httpapi"
	"github.com/eurekagate/eurekagate/registry/replication"
)

// syncLimit is the start-up sync's body limit in these tests: a registry
// of syncInstances fits in it, and the faults' answers do not.
const (
	syncInstances = 3000
	syncLimit     = 4 << 20
)

// origin starts a node holding syncInstances instances and returns its
// address.
func origin(t *testing.T) string {
	t.Helper()
	s := registry.New(registry.Config{DisableSelfPreservation: true})
	for k := range syncInstances {
		testkit.MustRegister(t, s, testkit.SampleInstance(k), false)
	}
	return serve(t, s, httpapi.APIConfig{})
}

// faulty is a peer in front of an origin that answers its first fails
// requests with fault, then passes every request through.
func faulty(t *testing.T, to string, fails int, fault http.HandlerFunc) string {
	t.Helper()
	proxy := httputil.NewSingleHostReverseProxy(&url.URL{Scheme: "http", Host: to})
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if int(n.Add(1)) <= fails {
			fault(w, r)
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/eureka/"
}

// The faults a peer's answer to the start-up sync may meet.
var syncFaults = map[string]http.HandlerFunc{
	"an answer over the body limit": func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"applications":{"application":[` + strings.Repeat(" ", syncLimit) + `]}}`))
	},
	"a timeout": func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		w.Write([]byte(`{"applications":{"application":[`))
		w.(http.Flusher).Flush()
		<-r.Context().Done() // hung: the reader's timeout ends it
	},
	"a 500": func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "boom", http.StatusInternalServerError)
	},
	"a reset mid-answer": func(w http.ResponseWriter, r *http.Request) {
		conn, buf, err := w.(http.Hijacker).Hijack()
		if err != nil {
			panic(err)
		}
		buf.WriteString("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 1000000\r\n\r\n")
		buf.WriteString(`{"applications":{"application":[{"name":"APP0","instance":[`)
		buf.Write(eureka.AppendInstanceJSON(nil, testkit.SampleInstance(0)))
		buf.Flush()
		conn.(*net.TCPConn).SetLinger(0)
		conn.Close()
	},
}

// A restarted node whose peer's first answers fail, in each way, answers
// reads 503 until it holds the peer's whole registry, and never 200 with
// an empty or partial one.
func TestSyncRetriesUntilItHoldsThePeersRegistry(t *testing.T) {
	from := origin(t)
	for name, fault := range syncFaults {
		t.Run(name, func(t *testing.T) {
			core, logs := observer.New(zapcore.WarnLevel)
			s := registry.New(registry.Config{DisableSelfPreservation: true})
			p, err := replication.New(s, replication.Config{
				Peers:            []string{faulty(t, from, 2, fault)},
				MaxResponseBytes: syncLimit, MaxResponseBytesSetting: "-max-response-bytes",
				Timeout: 300 * time.Millisecond, StartupSyncRetryWait: 10 * time.Millisecond,
				Logger: zap.New(core),
			})
			if err != nil {
				t.Fatal(err)
			}
			addr := serve(t, s, httpapi.APIConfig{Peers: p, Ready: p.Synced()})
			reads := readWhileSyncing(t, "http://"+addr+"/eureka/apps/", p.Synced())
			p.StartSync()
			defer p.Stop()
			<-p.Synced()
			if n := s.Len(); n != syncInstances {
				t.Fatalf("the node holds %d of the peer's %d instances", n, syncInstances)
			}
			got := reads()
			if got.whole == 0 {
				t.Errorf("no read of the synced registry: %+v", got)
			}
			if got.bad != nil {
				t.Errorf("the node served a registry it did not hold whole: %v", got.bad)
			}
			warned := logs.FilterMessageSnippet("reading the peer's registry failed").All()
			if len(warned) < 2 {
				t.Fatalf("%d warnings for the 2 failed reads: %v", len(warned), logs.All())
			}
			if name == "an answer over the body limit" && !strings.Contains(warned[0].ContextMap()["error"].(string), "raise -max-response-bytes") {
				t.Errorf("the warning does not name the setting: %v", warned[0].ContextMap())
			}
		})
	}
}

// readOutcome is what the reads of a syncing node got.
type readOutcome struct {
	refused, whole int
	bad            []string // answers that were neither 503 nor the whole registry
}

// readWhileSyncing reads url over and over until synced is closed and one
// more read is done; the returned func waits for that and tells what came.
func readWhileSyncing(t *testing.T, url string, synced <-chan struct{}) func() readOutcome {
	var out readOutcome
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for done := false; ; {
			select {
			case <-synced:
				done = true
			default:
			}
			req, _ := http.NewRequest("GET", url, nil)
			req.Header.Set("Accept", "application/json")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				out.bad = append(out.bad, err.Error())
				return
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			switch apps, err := eureka.DecodeApplicationsJSON(body); {
			case resp.StatusCode == http.StatusServiceUnavailable:
				out.refused++
			case resp.StatusCode == http.StatusOK && err == nil && countInstances(apps) == syncInstances:
				out.whole++
			default:
				n := -1
				if err == nil {
					n = countInstances(apps)
				}
				out.bad = append(out.bad, strconv.Itoa(resp.StatusCode)+" with "+strconv.Itoa(n)+" instances")
			}
			if done {
				return
			}
		}
	}()
	return func() readOutcome { wg.Wait(); return out }
}

func countInstances(apps *eureka.Applications) int {
	n := 0
	for _, a := range apps.Applications {
		n += len(a.Instances)
	}
	return n
}

// Peers that are down, empty or syncing themselves make a new cluster: the
// node opens at once, without waiting to ask again.
func TestSyncOpensAtOnceWhenNoPeerHasInstances(t *testing.T) {
	down := testkit.FreeAddr(t) // nothing listens
	empty := serve(t, registry.New(registry.Config{}), httpapi.APIConfig{})
	never := make(chan struct{}) // a node whose own sync is not done
	starting := serve(t, registry.New(registry.Config{}), httpapi.APIConfig{Ready: never})

	s := registry.New(registry.Config{})
	p, err := replication.New(s, replication.Config{
		Peers:                []string{"http://" + down + "/eureka/", "http://" + empty + "/eureka/", "http://" + starting + "/eureka/"},
		StartupSyncRetryWait: time.Hour, // a retry would hold the test until its deadline
	})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if n := p.SyncFrom(ctx); n != 0 || ctx.Err() != nil {
		t.Fatalf("synced %d instances, context %v: the node did not open at once", n, ctx.Err())
	}
}

// A peer answering the start-up sync with a gzip bomb is refused at the
// size limit: nothing is adopted, memory stays bounded, and after the
// sync's deadline reads stay refused for the empty-sync wait (Eureka's
// waitTimeInMsWhenSyncEmpty) rather than opening on an empty registry.
func TestSyncRefusesGzipBomb(t *testing.T) {
	var bomb bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&bomb, gzip.BestCompression)
	zw.Write([]byte(`{"applications":{"application":[`))
	space := bytes.Repeat([]byte(" "), 1<<20)
	for range 256 { // 256 MiB of a document that never ends
		zw.Write(space)
	}
	zw.Close()
	peer := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Encoding", "gzip")
		w.Header().Set("Content-Type", "application/json")
		w.Write(bomb.Bytes())
	}))
	defer peer.Close()
	core, logs := observer.New(zapcore.WarnLevel)
	s := registry.New(registry.Config{})
	p, err := replication.New(s, replication.Config{
		Peers: []string{peer.URL + "/eureka/"}, MaxResponseBytes: 1 << 20,
		StartupSyncTimeout: 200 * time.Millisecond, StartupSyncRetryWait: 10 * time.Millisecond,
		StartupSyncEmptyWait: time.Hour, Logger: zap.New(core),
	})
	if err != nil {
		t.Fatal(err)
	}
	p.StartSync()
	testkit.Eventually(t, 10*time.Second, "the sync's deadline", func() bool {
		return logs.FilterMessageSnippet("deadline passed with errors").Len() == 1
	})
	select {
	case <-p.Synced():
		t.Fatal("reads opened on an empty registry after errors only")
	default:
	}
	p.Stop()
	<-p.Synced() // Stop ends the wait
	if s.Len() != 0 {
		t.Fatalf("synced %d instances from a gzip bomb", s.Len())
	}
	for _, e := range logs.FilterMessageSnippet("reading the peer's registry failed").All() {
		if !strings.Contains(e.ContextMap()["error"].(string), "raise MaxResponseBytes") {
			t.Fatalf("the warning does not name the setting: %v", e.ContextMap())
		}
	}
}

// syncHoldsReads starts p's sync, waits for its deadline, and fails the
// test if reads opened: an error is no peer with nothing to give.
func syncHoldsReads(t *testing.T, p *replication.Peers, logs *observer.ObservedLogs) {
	t.Helper()
	p.StartSync()
	testkit.Eventually(t, 20*time.Second, "the sync's deadline", func() bool {
		return logs.FilterMessageSnippet("deadline passed with errors").Len() == 1
	})
	select {
	case <-p.Synced():
		t.Fatal("reads opened on an empty registry after errors only")
	default:
	}
}

// A 503 of a peer that is not syncing (its credential checks busy, say)
// is an error asked again, not a peer syncing itself.
func TestSyncAsksABusyPeerAgain(t *testing.T) {
	busy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Eurekagate-Node", "1234abcd") // on every answer of our servers
		http.Error(w, "too many credential checks in progress; retry", http.StatusServiceUnavailable)
	}))
	defer busy.Close()
	core, logs := observer.New(zapcore.WarnLevel)
	p, err := replication.New(registry.New(registry.Config{}), replication.Config{
		Peers: []string{busy.URL + "/eureka/"}, StartupSyncTimeout: 300 * time.Millisecond,
		StartupSyncRetryWait: 10 * time.Millisecond, StartupSyncEmptyWait: time.Hour, Logger: zap.New(core),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop()
	syncHoldsReads(t, p, logs)
}

// A DNS look-up of the peers that fails at start (a server that does not
// answer) is an error asked again, not a cluster without peers.
func TestSyncAsksAgainWhenThePeersNameDoesNotResolve(t *testing.T) {
	mute, err := net.ListenPacket("udp", "127.0.0.1:0") // reads, never answers
	if err != nil {
		t.Fatal(err)
	}
	defer mute.Close()
	core, logs := observer.New(zapcore.WarnLevel)
	p, err := replication.New(registry.New(registry.Config{}), replication.Config{
		PeersDNS: []string{"http://eureka-peers.example:8761/eureka/"}, DNSResolver: mute.LocalAddr().String(),
		Timeout: 100 * time.Millisecond, StartupSyncTimeout: 500 * time.Millisecond,
		StartupSyncRetryWait: 10 * time.Millisecond, StartupSyncEmptyWait: time.Hour, Logger: zap.New(core),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Stop()
	syncHoldsReads(t, p, logs)
}
