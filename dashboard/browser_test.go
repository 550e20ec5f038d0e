package dashboard

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/eurekagate/eurekagate/eureka"
	"github.com/eurekagate/eurekagate/registry"
	"github.com/eurekagate/eurekagate/registry/httpapi"
)

// chromium finds Debian's Chromium, which .ci/run installs when missing.
func chromium(t *testing.T) string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if path, err := exec.LookPath(name); err == nil {
			return path
		}
	}
	t.Skip("Chromium is not installed and could not be installed (apt-get install chromium): skipping the browser test")
	return ""
}

// startRegistry runs the standalone server with the dashboard at / on
// loopback.
func startRegistry(t *testing.T, auth httpapi.AuthConfig) (string, *registry.Store) {
	t.Helper()
	store := registry.New(registry.Config{})
	api := httpapi.NewAPI(store, httpapi.APIConfig{Auth: auth})
	srv := httpapi.NewServer(api, httpapi.ServerConfig{
		Addr: "127.0.0.1:0", Other: api.Protect(New(store, Config{Version: "test"})),
	})
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Stop(context.Background()) })
	return srv.Addr().String(), store
}

func register(t *testing.T, store *registry.Store, app, id string) {
	t.Helper()
	err := store.Register(&eureka.InstanceInfo{
		InstanceID: id, HasInstanceID: true, HostName: "127.0.0.1", App: app, IPAddr: "127.0.0.1",
		Status: eureka.StatusUp, Port: eureka.Port{Number: 8080, Enabled: true},
		DataCenterInfo: eureka.DataCenterInfo{Name: eureka.DataCenterMyOwn},
		Metadata:       map[string]string{"zone": "zone-a"},
		StatusPageURL:  "http://127.0.0.1:8080/info", HealthCheckURL: "javascript:alert(1)",
	}, false)
	if err != nil {
		t.Fatal(err)
	}
}

// browser starts headless Chromium with no network beyond loopback.
func browser(t *testing.T, width int) context.Context {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium(t)),
		chromedp.Flag("headless", true), chromedp.Flag("no-sandbox", true), chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-quic", true), chromedp.Flag("no-first-run", true),
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(width, 900),
	)
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelCtx := chromedp.NewContext(alloc)
	ctx, cancelTimeout := context.WithTimeout(ctx, 60*time.Second)
	t.Cleanup(func() { cancelTimeout(); cancelCtx(); cancelAlloc() })
	return ctx
}

// artifact saves a screenshot where CI keeps test artifacts.
func artifact(t *testing.T, name string, png []byte) {
	dir := os.Getenv("ARTIFACTS_DIR")
	if dir == "" {
		dir = filepath.Join("..", "artifacts")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", path)
}

func row(id string) string { return fmt.Sprintf(`tr[data-instance=%q]`, id) }

// page drives one browser tab.
type page struct {
	t   *testing.T
	ctx context.Context
}

func (p page) do(actions ...chromedp.Action[chromedp.Void]) {
	p.t.Helper()
	for _, a := range actions {
		if _, err := chromedp.Run(p.ctx, a); err != nil {
			p.t.Fatal(err)
		}
	}
}

func (p page) text(sel string) string {
	p.t.Helper()
	v, err := chromedp.Run(p.ctx, chromedp.Text(chromedp.CSS(sel)))
	if err != nil {
		p.t.Fatal(err)
	}
	return v
}

func (p page) screenshot(name string) {
	p.t.Helper()
	png, err := chromedp.Run(p.ctx, chromedp.FullScreenshot(100))
	if err != nil {
		p.t.Fatal(err)
	}
	artifact(p.t, name, png)
}

func visible(sel string) chromedp.Action[chromedp.Void] {
	return chromedp.WaitVisible(chromedp.CSS(sel))
}
func click(sel string) chromedp.Action[chromedp.Void] { return chromedp.Click(chromedp.CSS(sel)) }
func gone(sel string) chromedp.Action[chromedp.Void] {
	return chromedp.WaitNotPresent(chromedp.CSS(sel))
}

// confirm answers the page's confirmation dialog.
func confirm(button string) []chromedp.Action[chromedp.Void] {
	return []chromedp.Action[chromedp.Void]{visible(button), click(button)}
}

// The dashboard shows a new instance without a reload, takes it out of
// service from the page and deregisters it, each after a confirmation.
func TestDashboardInBrowser(t *testing.T) {
	addr, store := startRegistry(t, httpapi.AuthConfig{})
	register(t, store, "ORDERS", "orders-1")
	p := page{t, browser(t, 1280)}

	p.do(chromedp.Navigate("http://"+addr+"/"), visible(row("orders-1")))
	if first := p.text(row("orders-1")); !strings.Contains(first, "ORDERS") || !strings.Contains(first, "UP") || !strings.Contains(first, "zone-a") {
		t.Fatalf("row: %q", first)
	}

	// Registered after the page loaded: it appears without a reload.
	register(t, store, "INVENTORY", "inventory-1")
	p.do(visible(row("inventory-1")))

	// Take it out of service, confirming in the dialog.
	p.do(click(row("inventory-1") + ` button:not(.danger)`))
	p.do(confirm("#confirm-ok")...)
	p.do(visible(row("inventory-1") + ` .status-OUT_OF_SERVICE`))
	if i, _ := store.Get("INVENTORY", "inventory-1"); i.Status != eureka.StatusOutOfService {
		t.Fatalf("registry status after taking it out of service: %v", i.Status)
	}
	p.screenshot("dashboard.png")

	// Deregister it: it disappears.
	p.do(click(row("inventory-1") + ` button.danger`))
	p.do(confirm("#confirm-ok")...)
	p.do(gone(row("inventory-1")))
	if _, ok := store.Get("INVENTORY", "inventory-1"); ok {
		t.Fatal("still registered after deregistering")
	}
	if result := p.text("#result"); !strings.Contains(result, "done") {
		t.Fatalf("result line: %q", result)
	}

	// A cancelled confirmation changes nothing.
	p.do(click(row("orders-1") + ` button.danger`))
	p.do(confirm("#confirm-cancel")...)
	p.do(chromedp.Sleep(300 * time.Millisecond))
	if _, ok := store.Get("ORDERS", "orders-1"); !ok {
		t.Fatal("a cancelled confirmation deregistered the instance")
	}

	// The unsafe health link was not rendered.
	links, err := chromedp.Run(p.ctx, chromedp.Evaluate[int](`document.querySelectorAll('a[href^="javascript"]').length`))
	if err != nil {
		t.Fatal(err)
	}
	if links != 0 {
		t.Error("a javascript: link reached the page")
	}
}

// On a narrow screen the table becomes one card per instance.
func TestDashboardNarrowScreen(t *testing.T) {
	addr, store := startRegistry(t, httpapi.AuthConfig{})
	register(t, store, "ORDERS", "orders-1")
	p := page{t, browser(t, 390)}
	p.do(chromedp.Navigate("http://"+addr+"/"), visible(row("orders-1")))
	display, err := chromedp.Run(p.ctx, chromedp.Evaluate[string](`getComputedStyle(document.querySelector('#instances td')).display`))
	if err != nil {
		t.Fatal(err)
	}
	if display != "block" {
		t.Errorf("narrow layout not applied: td display %q", display)
	}
	p.screenshot("dashboard-narrow.png")
}

// With auth on, the page is challenged and its actions carry the
// credentials the browser holds for the registry (as after the operator
// answered the basic-auth prompt).
func TestDashboardActionsCarryCredentials(t *testing.T) {
	hash, err := httpapi.HashPassword("s3cret")
	if err != nil {
		t.Fatal(err)
	}
	addr, store := startRegistry(t, httpapi.AuthConfig{Users: []httpapi.Account{{Username: "ops", PasswordHash: hash}}})
	register(t, store, "ORDERS", "orders-1")
	p := page{t, browser(t, 1280)}
	// Without credentials the page itself is refused.
	if resp, err := http.Get("http://" + addr + "/"); err != nil || resp.StatusCode != 401 || resp.Header.Get("WWW-Authenticate") == "" {
		t.Fatalf("page without credentials: %v %v", resp, err)
	} else {
		resp.Body.Close()
	}
	if _, err := chromedp.Call(p.ctx, network.SetExtraHTTPHeaders, network.SetExtraHTTPHeadersParams{
		Headers: network.Headers{"Authorization": "Basic " + base64.StdEncoding.EncodeToString([]byte("ops:s3cret"))},
	}); err != nil {
		t.Fatal(err)
	}
	p.do(chromedp.Navigate("http://"+addr+"/"), visible(row("orders-1")))
	p.do(click(row("orders-1") + ` button:not(.danger)`))
	p.do(confirm("#confirm-ok")...)
	p.do(visible(row("orders-1") + ` .status-OUT_OF_SERVICE`))

	// Without credentials the same kind of action is refused.
	req, _ := http.NewRequest("DELETE", "http://"+addr+"/eureka/apps/ORDERS/orders-1", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 401 {
		t.Fatalf("action without credentials: %d", resp.StatusCode)
	}
}
