package httpapi

import (
	"testing"

	"github.com/eurekagate/eurekagate/internal/testkit"
)

// BenchmarkRenewAPI is a heartbeat through the transport-neutral core, as
// both front doors call it.
func BenchmarkRenewAPI(b *testing.B) {
	s := sampleStore(b, 1000)
	api := NewAPI(s, APIConfig{})
	paths := make([]string, 1000)
	for n := range paths {
		i := testkit.SampleInstance(n)
		paths[n] = "/eureka/apps/" + i.App + "/" + i.InstanceID
	}
	q, _ := parseQuery("status=UP&lastDirtyTimestamp=1000")
	b.ReportAllocs()
	b.ResetTimer()
	for n := range b.N {
		var resp Response
		api.Serve(&Request{Method: "PUT", Path: paths[n%1000], Query: q}, &resp)
		if resp.Status != 200 {
			b.Fatal(resp.Status)
		}
	}
}
