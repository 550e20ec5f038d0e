package registry

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// frontDoor starts the API behind one of its two HTTP front doors on
// loopback and returns the base URL.
type frontDoor struct {
	name  string
	start func(t testing.TB, api *API) string
}

var frontDoors = []frontDoor{
	{"net/http", func(t testing.TB, api *API) string {
		srv := httptest.NewServer(NewHTTPHandler(api))
		t.Cleanup(srv.Close)
		return srv.URL
	}},
	{"fasthttp", func(t testing.TB, api *API) string {
		srv := NewServer(api, ServerConfig{Addr: "127.0.0.1:0"})
		if err := srv.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			if err := srv.Stop(ctx); err != nil {
				t.Error(err)
			}
		})
		return "http://" + srv.Addr().String()
	}},
}

// eachFrontDoor runs f against a fresh Store behind each front door.
func eachFrontDoor(t *testing.T, cfg Config, apiCfg APIConfig, f func(t *testing.T, base string, s *Store, clock *fakeClock)) {
	for _, fd := range frontDoors {
		t.Run(fd.name, func(t *testing.T) {
			s, clock := newTestStore(t, cfg)
			base := fd.start(t, NewAPI(s, apiCfg))
			f(t, base, s, clock)
		})
	}
}

var httpClient = &http.Client{
	Timeout:   10 * time.Second,
	Transport: &http.Transport{DisableCompression: true},
}
