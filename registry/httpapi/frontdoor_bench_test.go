package httpapi

import (
	"net/http"
	"testing"

	"github.com/valyala/fasthttp"

	"github.com/eurekagate/eurekagate/internal/testkit"
)

// BenchmarkFrontDoor measures the front doors' own work around the core:
// a request's fields read from the transport's request, the answer's
// headers and body written to its response, for a heartbeat and a gzipped
// full fetch (which sets every response header but WWW-Authenticate). The
// fasthttp path reuses one RequestCtx, as a keep-alive connection does, so
// its allocs/op are what the mapping adds per request.
func BenchmarkFrontDoor(b *testing.B) {
	s := sampleStore(b, 100)
	api := NewAPI(s, APIConfig{})
	renew := testkit.SampleInstance(7)
	renewURI := "/eureka/apps/" + renew.App + "/" + renew.InstanceID + "?status=UP&lastDirtyTimestamp=1000"
	headers := [][2]string{
		{"Accept", "application/json"}, {"Accept-Encoding", "gzip"}, {"Content-Type", "application/json"},
		{"Authorization", "Basic dTpw"}, {"Origin", "http://localhost"}, {"Sec-Fetch-Site", "same-origin"},
		{HeaderCSRF, "1"}, {"x-netflix-discovery-replication", "false"},
	}
	cases := []struct{ name, method, uri string }{
		{"renew", "PUT", renewURI},
		{"fullfetch-gzip", "GET", "/eureka/apps/"},
	}
	for _, c := range cases {
		b.Run("fasthttp/"+c.name, func(b *testing.B) {
			h := FastHTTPHandler(api)
			var ctx fasthttp.RequestCtx
			ctx.Request.Header.SetMethod(c.method)
			ctx.Request.SetRequestURI(c.uri)
			for _, kv := range headers {
				ctx.Request.Header.Set(kv[0], kv[1])
			}
			b.ReportAllocs()
			for b.Loop() {
				ctx.Response.Reset()
				h(&ctx)
				if ctx.Response.StatusCode() != http.StatusOK {
					b.Fatal(ctx.Response.StatusCode())
				}
			}
		})
		b.Run("net/http/"+c.name, func(b *testing.B) {
			h := NewHTTPHandler(api)
			r, err := http.NewRequest(c.method, c.uri, http.NoBody)
			if err != nil {
				b.Fatal(err)
			}
			for _, kv := range headers {
				r.Header.Set(kv[0], kv[1])
			}
			w := &discardWriter{h: http.Header{}}
			b.ReportAllocs()
			for b.Loop() {
				clear(w.h)
				h.ServeHTTP(w, r)
				if w.status != http.StatusOK {
					b.Fatal(w.status)
				}
			}
		})
	}
}

// discardWriter is a ResponseWriter that keeps the status and drops the
// body.
type discardWriter struct {
	h      http.Header
	status int
}

func (w *discardWriter) Header() http.Header         { return w.h }
func (w *discardWriter) WriteHeader(status int)      { w.status = status }
func (w *discardWriter) Write(b []byte) (int, error) { return len(b), nil }
