package testkit

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// HeldPeer is a registry peer on loopback whose registry (GET
// /eureka/apps...) is answered, empty, only once Release is called: a
// node syncing from it at start waits until then. Other requests get
// 200. It closes at the test's end.
type HeldPeer struct {
	// URL is its service URL, ending in /eureka/.
	URL     string
	release chan struct{}
	once    sync.Once
}

// NewHeldPeer starts a held peer.
func NewHeldPeer(t testing.TB) *HeldPeer {
	t.Helper()
	p := &HeldPeer{release: make(chan struct{})}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/eureka/apps") {
			select {
			case <-p.release:
			case <-r.Context().Done():
				return
			}
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(`{"applications":{"versions__delta":"1","apps__hashcode":"","application":[]}}`))
			return
		}
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(func() {
		p.Release()
		srv.Close()
	})
	p.URL = srv.URL + "/eureka/"
	return p
}

// Release lets the registry's readers have it, now and from then on.
func (p *HeldPeer) Release() { p.once.Do(func() { close(p.release) }) }
