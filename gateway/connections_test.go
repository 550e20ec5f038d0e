package gateway

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"

	"github.com/eurekagate/eurekagate/registry"
)

// The traffic's readers see the connections each path holds to an
// instance, by its address.
func TestConnectionsPerInstance(t *testing.T) {
	for _, loops := range []int{1, -1} {
		t.Run("loops="+strconv.Itoa(loops), func(t *testing.T) {
			store := registry.New(registry.Config{})
			backend := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }))
			defer backend.Close()
			port := backend.Listener.Addr().(*net.TCPAddr).Port
			register(t, store, "orders", "a", port)
			base, g, _ := startServer(t, Config{}, ServerConfig{Loops: loops}, store)
			for range 5 {
				resp, err := client.Get(base + "/orders/x")
				if err != nil {
					t.Fatal(err)
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
			got := map[string]int{}
			g.Traffic().Connections(func(app, addr string, n int) { got[app+" "+addr] += n })
			if want := "ORDERS 127.0.0.1:" + strconv.Itoa(port); got[want] < 1 || len(got) != 1 {
				t.Fatalf("connections %v, want some to %s", got, want)
			}
		})
	}
}
