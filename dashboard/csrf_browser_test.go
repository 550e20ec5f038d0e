package dashboard

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/eurekagate/eurekagate/eureka"
	"github.com/eurekagate/eurekagate/registry"
	"github.com/eurekagate/eurekagate/registry/httpapi"
)

// seen is a request that reached the registry, and its answer.
type seen struct {
	method, path, contentType string
	status                    int
}

// statusRecorder keeps the status a handler wrote.
type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (r *statusRecorder) WriteHeader(code int) { r.status = code; r.ResponseWriter.WriteHeader(code) }

// attackPage is a page of another origin that tries every write a page can
// send without the registry's approval: a text/plain form posting a
// replication batch that cancels orders-1, a fetch posting a registration
// without a content type (a Blob), a fetch posting the batch as
// text/plain, and credentialed cross-origin DELETEs (with and without the
// custom header), which need a preflight.
const attackPage = `<!doctype html><title>attack</title>
<iframe name="sink"></iframe>
<form id="f" method="POST" enctype="text/plain" target="sink" action="%[1]s/eureka/peerreplication/batch/">
<input name='{"replicationList":[{"action":"Cancel","appName":"ORDERS","id":"orders-1","pad":"' value='"}]}'>
</form>
<script>
(async () => {
  document.getElementById("f").submit();
  const reg = %[1]q;
  const attempts = [
    fetch(reg + "/eureka/apps/ORDERS", { method: "POST", mode: "no-cors", credentials: "include", body: new Blob([%[2]s]) }),
    fetch(reg + "/eureka/peerreplication/batch/", { method: "POST", mode: "no-cors", credentials: "include", body: %[3]s }),
    fetch(reg + "/eureka/apps/ORDERS/orders-1", { method: "DELETE", credentials: "include" }),
    fetch(reg + "/eureka/apps/ORDERS/orders-1", { method: "DELETE", credentials: "include", headers: { "Eurekagate-CSRF": "1" } }),
  ];
  for (const a of attempts) { try { await a; } catch (e) {} }
  await new Promise((r) => setTimeout(r, 500)); // the form's answer
  document.title = "done";
})();
</script>`

// A page of another site cannot write to the registry through the
// visitor's browser, even when the browser holds the operator's
// credentials for it, while the dashboard's own actions work; a
// same-origin write without the custom header is refused too.
func TestOtherSitesCannotWrite(t *testing.T) {
	hash, err := httpapi.HashPassword("s3cret")
	if err != nil {
		t.Fatal(err)
	}
	store := registry.New(registry.Config{})
	register(t, store, "ORDERS", "orders-1")
	api := httpapi.NewAPI(store, httpapi.APIConfig{Auth: httpapi.AuthConfig{Users: []httpapi.Account{{Username: "ops", PasswordHash: hash}}}})
	apiHandler := httpapi.NewHTTPHandler(api)
	h := New(store, Config{Version: "test"})
	t.Cleanup(h.Close)
	dash := api.Protect(h)
	var mu sync.Mutex
	var log []seen
	reg := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !api.Match(r.URL.EscapedPath()) {
			dash.ServeHTTP(w, r)
			return
		}
		rec := &statusRecorder{ResponseWriter: w, status: 200}
		apiHandler.ServeHTTP(rec, r)
		mu.Lock()
		log = append(log, seen{r.Method, r.URL.Path, r.Header.Get("Content-Type"), rec.status})
		mu.Unlock()
	}))
	t.Cleanup(reg.Close)

	other := eureka.AppendInstanceJSON(nil, &eureka.InstanceInfo{InstanceID: "evil", HasInstanceID: true, HostName: "evil", App: "ORDERS",
		IPAddr: "10.6.6.6", Status: eureka.StatusUp, DataCenterInfo: eureka.DataCenterInfo{Name: eureka.DataCenterMyOwn}})
	regJSON, _ := json.Marshal(string(other))
	batchJSON, _ := json.Marshal(`{"replicationList":[{"action":"Cancel","appName":"ORDERS","id":"orders-1"}]}`)
	evil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, attackPage, reg.URL, regJSON, batchJSON)
	}))
	t.Cleanup(evil.Close)

	p := page{t, browser(t, 1280)}
	// As if the operator had answered the registry's basic-auth prompt:
	// the browser sends the credentials with every request.
	if _, err := chromedp.Call(p.ctx, network.SetExtraHTTPHeaders, network.SetExtraHTTPHeadersParams{
		Headers: network.Headers{"Authorization": "Basic " + base64.StdEncoding.EncodeToString([]byte("ops:s3cret"))},
	}); err != nil {
		t.Fatal(err)
	}
	p.do(chromedp.Navigate(evil.URL + "/"))
	p.waitFor("the attack page to finish", `document.title === "done"`, 20*time.Second)

	mu.Lock()
	got := append([]seen(nil), log...)
	mu.Unlock()
	var posts int
	for _, s := range got {
		switch {
		case s.method == "POST" && s.status == http.StatusUnsupportedMediaType:
			posts++
		case s.method == "OPTIONS": // a preflight, never approved
		default:
			t.Errorf("%s %s (%q) reached the registry and got %d", s.method, s.path, s.contentType, s.status)
		}
	}
	if posts != 3 {
		t.Errorf("%d cross-site POSTs answered 415, want 3 (the form and two fetches): %+v", posts, got)
	}
	if i, ok := store.Get("ORDERS", "orders-1"); !ok || i.Status != eureka.StatusUp || store.Len() != 1 {
		t.Fatalf("another site changed the registry: %d instances, orders-1 %v", store.Len(), ok)
	}

	// On the registry's own origin: the dashboard's action works; the same
	// write without the header does not.
	p.do(chromedp.Navigate(reg.URL+"/"), visible(row("orders-1")))
	status, err := chromedp.Run(p.ctx, chromedp.Evaluate[int](`fetch("/eureka/apps/ORDERS/orders-1/status?value=OUT_OF_SERVICE", { method: "PUT" }).then((r) => r.status)`, chromedp.EvalAwaitPromise))
	if err != nil || status != http.StatusForbidden {
		t.Errorf("same-origin write without %s: %d %v, want 403", httpapi.HeaderCSRF, status, err)
	}
	p.do(click(row("orders-1") + ` button:not(.danger)`))
	p.do(confirm("#confirm-ok")...)
	p.do(visible(row("orders-1") + ` .status-OUT_OF_SERVICE`))
	if !strings.Contains(dashboardJS(t), `"`+httpapi.HeaderCSRF+`": "1"`) {
		t.Errorf("the dashboard's actions do not send %s", httpapi.HeaderCSRF)
	}
}

// dashboardJS returns the dashboard's script as served.
func dashboardJS(t *testing.T) string {
	t.Helper()
	b, err := static.ReadFile("static/dashboard.js")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
