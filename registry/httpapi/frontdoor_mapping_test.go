package httpapi

import (
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"testing"

	"github.com/valyala/fasthttp"

	"github.com/eurekagate/eurekagate/registry"
)

// Both front doors read a request's headers into the same Request, however
// the client spells the names.
func TestFrontDoorsReadHeadersAlike(t *testing.T) {
	headers := [][2]string{
		{"accept", "application/json"}, {"ACCEPT-ENCODING", "gzip"}, {"Content-Type", "application/xml"},
		{"content-encoding", "gzip"}, {"x-netflix-discovery-replication", "true"}, {"Authorization", "Basic dTpw"},
		{"Origin", "http://localhost"}, {"sec-fetch-site", "same-origin"}, {HeaderCSRF, "1"},
	}
	want := Request{Accept: "application/json", AcceptEncoding: "gzip", ContentType: "application/xml",
		ContentEncoding: "gzip", Replication: true, Authorization: "Basic dTpw", Origin: "http://localhost",
		FetchSite: "same-origin", CSRF: "1"}

	var fast fasthttp.RequestHeader
	std := http.Header{}
	for _, kv := range headers {
		fast.Set(kv[0], kv[1])
		std.Set(kv[0], kv[1])
	}
	var fromFast, fromStd Request
	readHeaders(&fromFast, (*fastRequestHeader)(&fast))
	readHeaders(&fromStd, std)
	if !reflect.DeepEqual(fromFast, want) || !reflect.DeepEqual(fromStd, want) {
		t.Errorf("fasthttp read %+v\nnet/http read %+v\nwant %+v", fromFast, fromStd, want)
	}
	// Only "true" marks a replicated call, and absent headers are empty.
	var none fasthttp.RequestHeader
	none.Set("x-netflix-discovery-replication", "TRUE")
	fromFast, fromStd = Request{}, Request{}
	readHeaders(&fromFast, (*fastRequestHeader)(&none))
	readHeaders(&fromStd, http.Header{"X-Netflix-Discovery-Replication": {"TRUE"}})
	if !reflect.DeepEqual(fromFast, Request{}) || !reflect.DeepEqual(fromStd, Request{}) {
		t.Errorf("fasthttp read %+v, net/http read %+v; want nothing", fromFast, fromStd)
	}
}

// Both front doors answer with the same headers: for a gzipped full
// fetch Content-Type, Content-Encoding, Vary: Accept-Encoding (once, added
// after any Vary already there), the watch's and the node's; for a 401
// the challenge.
func TestFrontDoorsWriteHeadersAlike(t *testing.T) {
	s, _ := newTestStore(t, registry.Config{})
	mustRegister(t, s, inst("A", "x"), false)
	api := NewAPI(s, APIConfig{Auth: AuthConfig{Users: []Account{account(t, "u", "p")}, RequireForReads: true}})
	fast, std := FastHTTPHandler(api), NewHTTPHandler(api)
	serve := func(path string, header [][2]string, vary string) (fastH, stdH http.Header, fastStatus, stdStatus int) {
		var ctx fasthttp.RequestCtx
		ctx.Request.SetRequestURI(path)
		r := httptest.NewRequest("GET", path, nil)
		for _, kv := range header {
			ctx.Request.Header.Set(kv[0], kv[1])
			r.Header.Set(kv[0], kv[1])
		}
		w := httptest.NewRecorder()
		if vary != "" {
			ctx.Response.Header.Add("Vary", vary)
			w.Header().Add("Vary", vary)
		}
		fast(&ctx)
		std.ServeHTTP(w, r)
		fastH = http.Header{}
		for k, v := range ctx.Response.Header.All() {
			fastH.Add(string(k), string(v))
		}
		return fastH, w.Result().Header, ctx.Response.StatusCode(), w.Code
	}
	names := []string{"Content-Type", "Content-Encoding", "Vary", "Www-Authenticate", HeaderWatch, HeaderNode, HeaderVersion}
	check := func(what string, fastH, stdH http.Header, fastStatus, stdStatus, status int, want map[string][]string) {
		t.Helper()
		if fastStatus != status || stdStatus != status {
			t.Errorf("%s: status %d (fasthttp), %d (net/http), want %d", what, fastStatus, stdStatus, status)
		}
		for _, name := range names {
			if !slices.Equal(fastH.Values(name), stdH.Values(name)) {
				t.Errorf("%s: %s is %q on fasthttp, %q on net/http", what, name, fastH.Values(name), stdH.Values(name))
			}
			if w, ok := want[name]; ok && !slices.Equal(stdH.Values(name), w) {
				t.Errorf("%s: %s = %q, want %q", what, name, stdH.Values(name), w)
			}
		}
	}
	auth := [2]string{"Authorization", "Basic dTpw"}
	fastH, stdH, fs, ss := serve("/eureka/apps/", [][2]string{auth, {"Accept", "application/json"}, {"Accept-Encoding", "gzip"}}, "")
	check("gzipped full fetch", fastH, stdH, fs, ss, 200, map[string][]string{
		"Content-Type": {"application/json"}, "Content-Encoding": {"gzip"}, "Vary": {"Accept-Encoding"},
		HeaderWatch: {WatchVersion}, HeaderNode: {api.node}, HeaderVersion: {s.Token(registry.Version{Local: s.Version()})}})
	fastH, stdH, fs, ss = serve("/eureka/apps/", [][2]string{auth, {"Accept-Encoding", "gzip"}}, "Origin")
	check("gzipped full fetch after a Vary", fastH, stdH, fs, ss, 200, map[string][]string{"Vary": {"Origin", "Accept-Encoding"}})
	fastH, stdH, fs, ss = serve("/eureka/apps/", [][2]string{auth}, "")
	check("plain full fetch", fastH, stdH, fs, ss, 200, map[string][]string{"Content-Type": {"application/xml"}, "Content-Encoding": nil, "Vary": nil})
	fastH, stdH, fs, ss = serve("/eureka/apps/", nil, "")
	check("refused", fastH, stdH, fs, ss, 401, map[string][]string{"Www-Authenticate": {`Basic realm="eureka"`}, HeaderVersion: nil})
}
