// Package dashboardsuite holds the dashboard's browser scenarios that
// both gateways must pass alike: the fasthttp gateway beside cmd/eureka's
// dashboard (package dashboard's tests) and Caddy's eureka_gateway beside
// eureka_dashboard (package caddymodule's). A scenario talks to the
// registry, the gateway and the page over loopback only.
package dashboardsuite

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/eurekagate/eurekagate/eureka"
	"github.com/eurekagate/eurekagate/internal/browsertest"
	"github.com/eurekagate/eurekagate/internal/testkit"
)

// Setup is where a scenario finds what the host started: a registry with
// a dashboard, and a gateway routing by that registry that ejects an
// instance after one failed call for at most a second (so that an
// instance that answers again is tried, and unmarked, within it).
type Setup struct {
	// Dashboard is the dashboard's URL, ending in "/".
	Dashboard string
	// Registry is the Eureka REST API's URL, ending in "/eureka/".
	Registry string
	// Gateway is the gateway's URL, without a trailing slash.
	Gateway string
	// Repo is the way from the test's package to the repository's root
	// ("..", "../.."), where artifacts/ is.
	Repo string
	// Name prefixes the screenshots' names ("fasthttp", "caddy").
	Name string
	// DocsImage, if set, is where the traffic panel at 1280 px is saved
	// for the docs too (docs/images/dashboard-traffic.png, from the
	// repository's root), when EUREKAGATE_DOCS_IMAGES is set: the picture
	// users see first, made from this scenario's plain names.
	DocsImage string
}

// OutOfRotation: ORDERS has two instances, one refusing connections,
// under load through the gateway with INVENTORY and PAYMENTS, and with
// requests for names nobody registered. Within 5 s the refusing
// instance is marked ejected in the Applications list (its app's row and
// its own) and in ORDERS's traffic card (listed though it took no
// request), with since when, why and until when; api/summary and
// api/traffic say "ejected" with the same. The names nobody registered
// are one line, "unrouted", never an app card, and no app is named
// unknown. When the instance answers again, the marks go within 5 s.
// Screenshots at 1280 and 390 px.
func OutOfRotation(t *testing.T, s Setup) {
	up := backend(t, "orders-1")
	// orders-2's port: free now, nothing listening (connections refused)
	// until it comes back.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	deadPort := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	register(t, s.Registry, "ORDERS", "orders-1", up)
	register(t, s.Registry, "ORDERS", "orders-2", deadPort)
	register(t, s.Registry, "INVENTORY", "inventory-1", backend(t, "inventory-1"))
	register(t, s.Registry, "INVENTORY", "inventory-2", backend(t, "inventory-2"))
	register(t, s.Registry, "PAYMENTS", "payments-1", backend(t, "payments-1"))

	// The load: every 40 ms, two requests to ORDERS, one to INVENTORY, one
	// to PAYMENTS and three for names nobody registered, until the test
	// ends.
	client := &http.Client{Timeout: 5 * time.Second}
	t.Cleanup(client.CloseIdleConnections)
	testkit.TickUntilEnd(t, 40*time.Millisecond, func(ctx context.Context) {
		for _, p := range []string{"/orders/x", "/orders/x", "/inventory/x", "/payments/x", "/nobody/x", "/nothing/x", "/nobody/y"} {
			req, _ := http.NewRequestWithContext(ctx, "GET", s.Gateway+p, nil)
			if resp, err := client.Do(req); err == nil {
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		}
	})

	p := browsertest.Page{T: t, Ctx: browsertest.Browser(t, 1280)}
	p.Do(chromedp.Navigate(s.Dashboard), chromedp.WaitVisible(chromedp.CSS("#traffic-section")))
	p.WaitFor("ORDERS in the Applications list", `document.querySelector('tr.app-row[data-app="ORDERS"] button.toggle') !== null`, 10*time.Second)
	p.Eval(`(() => { const b = document.querySelector('tr.app-row[data-app="ORDERS"] button.toggle'); if (b.getAttribute("aria-expanded") !== "true") b.click(); })()`)

	const (
		appMark  = `document.querySelector('tr.app-row[data-app="ORDERS"] [data-mark="app-out"]')`
		rowMark  = `document.querySelector('tr[data-instance="orders-2"] [data-mark="ejected"]')`
		cardMark = `document.querySelector('#traffic .t-app[data-app="ORDERS"] li[data-instance="orders-2"] [data-mark="ejected"]')`
	)
	p.WaitFor("orders-2 marked ejected in the Applications list and in ORDERS's traffic card within 5 s",
		appMark+` !== null && `+rowMark+` !== null && `+cardMark+` !== null`, 5*time.Second)
	if got := p.Text(`tr[data-instance="orders-2"]`); !strings.Contains(got, "refused") || !strings.Contains(got, "since") || !strings.Contains(got, "tried again at") {
		t.Errorf("orders-2's row says %q: want why (refused), since when and until when", got)
	}
	if got := p.Text(`tr[data-instance="orders-1"]`); strings.Contains(got, "ejected") {
		t.Errorf("orders-1, which answers, is marked: %q", got)
	}
	if got := p.Text(`#traffic .t-app[data-app="ORDERS"] li[data-instance="orders-2"]`); !strings.Contains(got, "refused") {
		t.Errorf("orders-2 in ORDERS's card: %q", got)
	}
	// Unrouted names are one line, never a card.
	p.WaitFor("the unrouted line, the names asked most first", `(() => {
		const u = document.getElementById("traffic-unrouted");
		return !u.hidden && u.textContent.startsWith("Unrouted") && /asked most: NOBODY \(\d+\), NOTHING \(\d+\)$/.test(u.textContent);
	})()`, 5*time.Second)
	if n := p.Eval(`document.querySelectorAll('#traffic .t-app[data-app="unknown"], #traffic .t-app[data-app="NOBODY"], #traffic .t-app[data-app="NOTHING"]').length`); n != float64(0) {
		t.Errorf("%v cards for names nobody registered", n)
	}
	if got := p.Eval(`[...document.querySelectorAll("#traffic .t-app")].map((c) => c.dataset.app).sort().join(" ")`); got != "INVENTORY ORDERS PAYMENTS" {
		t.Errorf("the traffic cards: %v", got)
	}

	// The JSON says the same, for scripts.
	var summary summaryDoc
	getJSON(t, s.Dashboard+"api/summary", &summary)
	var ejected []string
	for _, a := range summary.Applications {
		for _, i := range a.Instances {
			if i.Ejected != nil {
				ejected = append(ejected, fmt.Sprintf("%s/%s since>0:%v until>since:%v %s", a.Name, i.ID, i.Ejected.Since > 0, i.Ejected.Until > i.Ejected.Since, i.Ejected.Reason))
			}
		}
	}
	if len(ejected) != 1 || !strings.HasPrefix(ejected[0], "ORDERS/orders-2 since>0:true until>since:true") || !strings.HasSuffix(ejected[0], "refused") {
		t.Errorf("api/summary's ejected instances: %q", ejected)
	}
	var tv trafficDoc
	getJSON(t, s.Dashboard+"api/traffic", &tv)
	var orders2 string
	for _, a := range tv.Apps {
		if a.App == "unknown" || a.App == "NOBODY" {
			t.Errorf("api/traffic has an app %q", a.App)
		}
		for _, i := range a.Instances {
			if a.App == "ORDERS" && i.ID == "orders-2" {
				orders2 = string(i.Ejected)
			}
		}
	}
	if !strings.Contains(orders2, `refused"`) || tv.Unrouted.LastMinute.Requests == 0 ||
		len(tv.OutOfRotation) != 1 || tv.OutOfRotation[0].ID != "orders-2" {
		t.Errorf("api/traffic: orders-2 ejected %s, unrouted %d, out of rotation %+v", orders2, tv.Unrouted.LastMinute.Requests, tv.OutOfRotation)
	}

	// Screenshots, with the marks on.
	p.Screenshot(s.Repo, s.Name+"-out-of-rotation-1280.png")
	panel := p.Element(s.Repo, "#traffic-section", s.Name+"-out-of-rotation-panel-1280.png")
	if s.DocsImage != "" && os.Getenv("EUREKAGATE_DOCS_IMAGES") != "" {
		// The docs' picture has some seconds of the charts.
		p.WaitFor("ten seconds of traffic in ORDERS's chart", `document.querySelectorAll('#traffic .t-app[data-app="ORDERS"] .s-requests path').length > 0 &&
			(() => { const d = document.querySelector('#traffic .t-app[data-app="ORDERS"] .s-requests path').getAttribute("d"); return d.split("L").length >= 10; })()`, 20*time.Second)
		panel = p.Element(s.Repo, "#traffic-section", s.Name+"-out-of-rotation-panel-1280.png")
		if err := os.WriteFile(filepath.Join(s.Repo, s.DocsImage), panel, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	p.Do(chromedp.EmulateViewport(390, 844))
	p.WaitFor("one card a row", `(() => {
		const cards = [...document.querySelectorAll("#traffic .t-app")];
		return cards.length === 3 && cards[1].getBoundingClientRect().top > cards[0].getBoundingClientRect().bottom;
	})()`, 5*time.Second)
	if over := p.Eval(`document.documentElement.scrollWidth > window.innerWidth`); over != false {
		t.Error("the page is wider than a 390 px screen")
	}
	p.Screenshot(s.Repo, s.Name+"-out-of-rotation-390.png")
	p.Do(chromedp.EmulateViewport(1280, 900))

	// orders-2 answers again: it is tried after its cooldown (a second),
	// and its marks go.
	back, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(deadPort))
	if err != nil {
		t.Fatalf("orders-2's port was taken meanwhile: %v", err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "orders-2") })}
	served := make(chan struct{})
	go func() { defer close(served); srv.Serve(back) }()
	t.Cleanup(func() { srv.Close(); <-served })
	p.WaitFor("orders-2's marks gone within 5 s of its answering again",
		appMark+` === null && `+rowMark+` === null && `+cardMark+` === null`, 5*time.Second)
	testkit.Eventually(t, 5*time.Second, "orders-2's requests in api/traffic", func() bool {
		var tv trafficDoc
		getJSON(t, s.Dashboard+"api/traffic", &tv)
		for _, a := range tv.Apps {
			for _, i := range a.Instances {
				if a.App == "ORDERS" && i.ID == "orders-2" && i.Requests > 0 && i.Ejected == nil {
					return true
				}
			}
		}
		return false
	})
	var after summaryDoc
	getJSON(t, s.Dashboard+"api/summary", &after)
	for _, a := range after.Applications {
		for _, i := range a.Instances {
			if i.Ejected != nil {
				t.Errorf("api/summary: %s/%s still ejected", a.Name, i.ID)
			}
		}
	}
}

// backend starts an instance on loopback that answers its name, until the
// test ends, and returns its port.
func backend(t *testing.T, name string) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, name) })}
	served := make(chan struct{})
	go func() { defer close(served); srv.Serve(ln) }()
	t.Cleanup(func() { srv.Close(); <-served })
	return ln.Addr().(*net.TCPAddr).Port
}

// register registers an UP instance of app on 127.0.0.1:port through the
// REST API.
func register(t *testing.T, registry, app, id string, port int) {
	t.Helper()
	inst := &eureka.InstanceInfo{
		InstanceID: id, HasInstanceID: true, HostName: "127.0.0.1", App: app, IPAddr: "127.0.0.1",
		Status: eureka.StatusUp, Port: eureka.Port{Number: port, Enabled: true},
		DataCenterInfo: eureka.DataCenterInfo{Name: eureka.DataCenterMyOwn},
	}
	testkit.Eventually(t, 5*time.Second, "registering "+id, func() bool {
		resp, err := http.Post(registry+"apps/"+app, "application/json", strings.NewReader(string(eureka.AppendInstanceJSON(nil, inst))))
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusNoContent
	})
}

// getJSON reads url into v.
func getJSON(t *testing.T, url string, v any) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatalf("%s: %v", url, err)
	}
}

// trafficDoc is what the scenario reads of api/traffic.
type trafficDoc struct {
	Apps []struct {
		App       string `json:"app"`
		Instances []struct {
			ID       string          `json:"id"`
			Requests uint64          `json:"requests"`
			Ejected  json.RawMessage `json:"ejected"`
		} `json:"instances"`
	} `json:"apps"`
	Unrouted struct {
		LastMinute struct {
			Requests uint64 `json:"requests"`
		} `json:"last_minute"`
	} `json:"unrouted"`
	OutOfRotation []struct {
		App, ID string
	} `json:"out_of_rotation"`
}

// summaryDoc is what the scenario reads of api/summary.
type summaryDoc struct {
	Applications []struct {
		Name      string `json:"name"`
		Instances []struct {
			ID      string `json:"id"`
			Ejected *struct {
				Since, Until int64
				Reason       string
			} `json:"ejected"`
		} `json:"instances"`
	} `json:"applications"`
}
