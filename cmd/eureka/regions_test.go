package main

import (
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/eurekagate/eurekagate/internal/testkit"
	"github.com/eurekagate/eurekagate/registry"
	"github.com/eurekagate/eurekagate/registry/httpapi"
	"github.com/eurekagate/eurekagate/registry/regions"
	"github.com/eurekagate/eurekagate/registry/regions/feeds"
)

func TestRegionOptions(t *testing.T) {
	o, err := parseOptions([]string{"-region", "us-east-1",
		"-remote-regions", "eu-west-1=http://eu-1:8761/eureka/,ap-south-1;https://ap:8761/eureka/,EU-West-1=http://eu-2:8761/eureka/",
		"-remote-region-apps", "eu-west-1=ORDERS, users", "-remote-region-apps", "global=BILLING;eu-west-1=CART",
		"-remote-region-fetch-interval", "10s", "-disable-transparent-fallback",
		"-remote-region-max-bytes", "1048576", "-remote-region-max-instances", "5000",
		"-gateway", "127.0.0.1:0", "-gateway-failover-regions", "EU-west-1, ap-south-1"},
		envOf(map[string]string{"EUREKA_REMOTE_REGION_RETENTION": "2m"}), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	st := o.registry.Store
	if st.Region != "us-east-1" || !st.DisableTransparentFallback || st.RemoteRegionRetention != 2*time.Minute ||
		!slices.Equal(st.RemoteRegionAppWhitelist, []string{"BILLING"}) {
		t.Errorf("store: %+v", st)
	}
	want := []registry.RemoteRegion{{Name: "eu-west-1", AppWhitelist: []string{"ORDERS", "users", "CART"}}, {Name: "ap-south-1"}}
	if len(st.RemoteRegions) != 2 || st.RemoteRegions[0].Name != want[0].Name || !slices.Equal(st.RemoteRegions[0].AppWhitelist, want[0].AppWhitelist) ||
		st.RemoteRegions[1].Name != "ap-south-1" || st.RemoteRegions[1].AppWhitelist != nil {
		t.Errorf("remote regions %+v, want %+v", st.RemoteRegions, want)
	}
	rr := o.registry.RemoteRegions
	if rr.FetchInterval != 10*time.Second || len(rr.Remotes) != 2 || rr.MaxRegionBytes != 1<<20 || rr.MaxRegionInstances != 5000 ||
		!slices.Equal(rr.Remotes[0].URLs, []string{"http://eu-1:8761/eureka/", "http://eu-2:8761/eureka/"}) ||
		!slices.Equal(rr.Remotes[1].URLs, []string{"https://ap:8761/eureka/"}) {
		t.Errorf("feeds: %+v", rr)
	}
	if got := o.gateway.Routing.FailoverRegions; !slices.Equal(got, []string{"eu-west-1", "ap-south-1"}) {
		t.Errorf("failover regions %v", got)
	}

	d, err := parseOptions(nil, noEnv, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if st := d.registry.Store; st.Region != registry.DefaultRegion || st.RemoteRegions != nil || st.RemoteRegionAppWhitelist != nil ||
		st.DisableTransparentFallback || st.RemoteRegionRetention != registry.DefaultRemoteRegionRetention {
		t.Errorf("defaults: %+v", st)
	}
	if rr := d.registry.RemoteRegions; rr.Remotes != nil || rr.FetchInterval != registry.DefaultRemoteRegionFetchInterval ||
		rr.MaxRegionBytes != registry.DefaultMaxRegionBytes || rr.MaxRegionInstances != registry.DefaultMaxRegionInstances {
		t.Errorf("default feeds: %+v", rr)
	}
	if d.gateway.Routing.FailoverRegions != nil {
		t.Errorf("default failover regions: %v", d.gateway.Routing.FailoverRegions)
	}
}

// https:// remote regions are read with the TLS configuration of the
// peers (-tls-ca).
func TestRemoteRegionsTLS(t *testing.T) {
	ca := testkit.NewCA(t, t.TempDir(), "regions")
	o, err := parseOptions([]string{"-tls-ca", ca.File, "-remote-regions", "eu-west-1=https://eu:8761/eureka/"}, noEnv, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if tc := o.registry.RemoteRegions.TLS; tc == nil || tc != o.registry.Peers.TLS || tc.RootCAs == nil {
		t.Errorf("remote regions' TLS %v, want the peers' %v", tc, o.registry.Peers.TLS)
	}
}

func TestRegionOptionErrors(t *testing.T) {
	eu := "eu-west-1=http://eu:8761/eureka/"
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-remote-regions", "http://eu:8761/eureka/"}, `-remote-regions: "http://eu:8761/eureka/" names no region; write it as name=URL`},
		{[]string{"-remote-regions", "eu-west-1="}, `-remote-regions: "eu-west-1=" has no URL`},
		{[]string{"-remote-regions", "eu-west-1=eu:8761"}, `-remote-regions: region eu-west-1: "eu:8761" is not an http or https URL`},
		{[]string{"-remote-regions", "us-east-1=http://us:8761/eureka/"}, "us-east-1 is this registry's own -region"},
		{[]string{"-region", "eu-west-1", "-remote-regions", eu}, "own -region"},
		{[]string{"-remote-regions", eu, "-remote-region-apps", "ap-south-1=A"}, `-remote-region-apps: "ap-south-1" is not one of -remote-regions (eu-west-1) or global`},
		{[]string{"-remote-regions", eu, "-remote-region-apps", "ORDERS"}, `-remote-region-apps: "ORDERS" names no region; write it as REGION=APP,APP`},
		{[]string{"-remote-regions", eu, "-remote-region-apps", "global="}, `"global=" lists no app`},
		{[]string{"-remote-region-apps", "global=A"}, "-remote-region-apps set without -remote-regions"},
		{[]string{"-remote-region-retention", "1m", "-disable-transparent-fallback"}, "-disable-transparent-fallback, -remote-region-retention set without -remote-regions"},
		{[]string{"-remote-region-fetch-interval", "1m"}, "-remote-region-fetch-interval set without -remote-regions"},
		{[]string{"-remote-region-max-instances", "10"}, "-remote-region-max-instances set without -remote-regions"},
		{[]string{"-remote-regions", eu, "-remote-region-max-bytes", "0"}, "-remote-region-max-bytes 0 must be above 0; leave it out for the default, 1073741824"},
		{[]string{"-remote-regions", eu, "-remote-region-max-instances", "-1"}, "-remote-region-max-instances -1 must be above 0; leave it out for the default, 1000000"},
		{[]string{"-remote-regions", eu, "-gateway-failover-regions", "eu-west-1"}, "-gateway-failover-regions is set without -gateway"},
		{[]string{"-remote-regions", eu, "-gateway", ":0", "-gateway-failover-regions", "ap-south-1"}, `"ap-south-1" is not one of -remote-regions`},
		{[]string{"-gateway", ":0", "-gateway-failover-regions", "eu-west-1"}, `"eu-west-1" is not one of -remote-regions`},
		{[]string{"-remote-regions", eu, "-gateway", ":0", "-gateway-failover-regions", "eu-west-1,EU-WEST-1"}, "listed twice"},
	} {
		_, err := parseOptions(c.args, noEnv, io.Discard)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want %q", c.args, err, c.want)
		}
	}
}

// register registers app/id at the registry at base.
func register(t *testing.T, base, app, id string) {
	t.Helper()
	body := `{"instance":{"instanceId":"` + id + `","hostName":"h","app":"` + app + `","ipAddr":"127.0.0.1","status":"UP","port":{"$":8080,"@enabled":"true"},"dataCenterInfo":{"@class":"com.netflix.appinfo.InstanceInfo$DefaultDataCenterInfo","name":"MyOwn"}}}`
	if status, b := testkit.HTTPPost(t, base+"/eureka/apps/"+app, "application/json", body); status != 204 {
		t.Fatalf("register %s/%s: %d %s", app, id, status, b)
	}
}

// getJSON reads url as JSON.
func getJSON(t *testing.T, url string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "application/json")
	resp, body := testkit.Do(t, http.DefaultClient, req)
	return resp.StatusCode, body
}

// The server reads its -remote-regions from start to stop: a read with
// regions= has the remote region's whitelisted instances, one without has
// none of them, and GET /apps/{app} falls back to the remote's copy.
func TestAppServesRemoteRegions(t *testing.T) {
	var remote *httpapi.Server
	startApp(t, []string{"-addr", "127.0.0.1:0", "-region", "eu-west-1", "-dashboard-path", "off"}, &remote)
	remoteURL := "http://" + remote.Addr().String()
	register(t, remoteURL, "ORDERS", "o1")
	register(t, remoteURL, "SECRET", "s1")

	var local *httpapi.Server
	var store *registry.Store
	var fd *feeds.Feeds
	startApp(t, []string{"-addr", "127.0.0.1:0", "-dashboard-path", "off", "-remote-regions", "eu-west-1=" + remoteURL + "/eureka/",
		"-remote-region-apps", "eu-west-1=ORDERS"}, &local, &store, &fd)
	if fd == nil {
		t.Fatal("no Feeds")
	}
	base := "http://" + local.Addr().String() + "/eureka"
	testkit.Eventually(t, 5*time.Second, "the remote region ready", func() bool {
		status, body := getJSON(t, base+"/apps?regions=eu-west-1")
		return status == 200 && strings.Contains(body, `"o1"`)
	})
	if _, body := getJSON(t, base+"/apps?regions=eu-west-1"); strings.Contains(body, "s1") {
		t.Errorf("an app outside the whitelist was merged in: %s", body)
	}
	if _, body := getJSON(t, base+"/apps"); strings.Contains(body, "o1") {
		t.Errorf("a read without regions has the remote region's instance: %s", body)
	}
	if status, body := getJSON(t, base+"/apps/ORDERS"); status != 200 || !strings.Contains(body, "o1") {
		t.Errorf("GET /apps/ORDERS, which only the remote region has: %d %s", status, body)
	}
	register(t, remoteURL, "ORDERS", "o2")
	testkit.Eventually(t, 5*time.Second, "the remote's registration", func() bool {
		return len(regions.MirrorOf(store).InstancesIn("ORDERS", "eu-west-1")) == 2
	})
	http.DefaultClient.CloseIdleConnections()
}

// Run as a process, the server reads its remote region and exits cleanly
// at SIGINT, the region's client stopped with it.
func TestProcessWithRemoteRegions(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the command")
	}
	var remote *httpapi.Server
	startApp(t, []string{"-addr", "127.0.0.1:0", "-region", "eu-west-1", "-dashboard-path", "off"}, &remote)
	remoteURL := "http://" + remote.Addr().String()
	register(t, remoteURL, "ORDERS", "o1")

	p := startProcess(t, binary(t), false, "-addr", "127.0.0.1:0", "-remote-regions", "eu-west-1="+remoteURL+"/eureka/",
		"-disable-transparent-fallback")
	testkit.Eventually(t, 5*time.Second, "the remote region ready", func() bool {
		status, body := getJSON(t, p.registry+"/eureka/apps?regions=eu-west-1")
		return status == 200 && strings.Contains(body, `"o1"`)
	})
	if status, _ := getJSON(t, p.registry+"/eureka/apps/ORDERS"); status != 404 {
		t.Errorf("GET /apps/ORDERS with -disable-transparent-fallback: %d, want 404", status)
	}
	http.DefaultClient.CloseIdleConnections()
	p.stop(t)
}
