package dashboard

import (
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/eurekagate/eurekagate/eureka"
	"github.com/eurekagate/eurekagate/registry"
	"github.com/eurekagate/eurekagate/registry/httpapi"
)

// Signed in as an account bound to ORDERS, the page disables the actions
// on PAYMENTS' instances, saying why, and keeps ORDERS' working.
func TestActionsFollowTheAccountsBinding(t *testing.T) {
	hash, err := httpapi.HashPassword("s3cret")
	if err != nil {
		t.Fatal(err)
	}
	store := registry.New(registry.Config{})
	register(t, store, "ORDERS", "orders-1")
	register(t, store, "PAYMENTS", "payments-1")
	api := httpapi.NewAPI(store, httpapi.APIConfig{Auth: httpapi.AuthConfig{
		Users: []httpapi.Account{{Username: "orders", PasswordHash: hash}},
		Apps:  map[string][]string{"orders": {"ORDERS"}}}})
	apiHandler := httpapi.NewHTTPHandler(api)
	h := New(store, Config{Version: "test", Permissions: PermissionsFrom(api.MayWrite)})
	t.Cleanup(h.Close)
	reg := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if api.Match(r.URL.EscapedPath()) {
			apiHandler.ServeHTTP(w, r)
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(reg.Close)

	p := page{t, browser(t, 1280)}
	if _, err := chromedp.Call(p.ctx, network.SetExtraHTTPHeaders, network.SetExtraHTTPHeadersParams{
		Headers: network.Headers{"Authorization": "Basic " + base64.StdEncoding.EncodeToString([]byte("orders:s3cret"))},
	}); err != nil {
		t.Fatal(err)
	}
	p.do(chromedp.Navigate(reg.URL+"/"), visible(row("orders-1")), visible(row("payments-1")))
	titles, err := chromedp.Run(p.ctx, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll('`+row("payments-1")+` button')).map((b) => b.disabled + " " + b.title)`))
	if err != nil {
		t.Fatal(err)
	}
	if len(titles) != 2 || !strings.HasPrefix(titles[0], "true Your account may not") || !strings.HasPrefix(titles[1], "true ") {
		t.Errorf("PAYMENTS' actions: %q, want both disabled with a title", titles)
	}
	enabled, err := chromedp.Run(p.ctx, chromedp.Evaluate[int](`document.querySelectorAll('`+row("orders-1")+` button:not([disabled])').length`))
	if err != nil || enabled != 2 {
		t.Errorf("ORDERS' enabled actions: %d %v, want 2", enabled, err)
	}
	p.do(click(row("orders-1") + ` button:not(.danger)`))
	p.do(confirm("#confirm-ok")...)
	p.do(visible(row("orders-1") + ` .status-OUT_OF_SERVICE`))
	if i, _ := store.Get("PAYMENTS", "payments-1"); i.Status != eureka.StatusUp {
		t.Errorf("payments-1 is %s", i.Status)
	}
}
