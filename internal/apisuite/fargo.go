package apisuite

import (
	"strconv"
	"testing"

	"github.com/hudl/fargo"
	logging "github.com/op/go-logging"
)

func init() {
	// fargo logs every request at NOTICE and DEBUG; keep test output short.
	logging.SetLevel(logging.WARNING, "fargo")
}

// FargoInstance is the registration the fargo tests send: app on host at
// IP address 127.0.0.1, UP, its HTTP port port and secure port 9443, its
// VIP addresses, pages at 127.0.0.1:port, a lease of 30 s renewals and
// 90 s expiry, and the metadata team=payments. Its id is fargo's default,
// the host name, unless InstanceId is set.
func FargoInstance(host, app, vip, secureVIP string, port int) *fargo.Instance {
	at := "http://127.0.0.1:" + strconv.Itoa(port)
	ins := &fargo.Instance{
		HostName: host, App: app, IPAddr: "127.0.0.1",
		VipAddress: vip, SecureVipAddress: secureVIP, Status: fargo.UP,
		Port: port, PortEnabled: true, SecurePort: 9443,
		HomePageUrl: at + "/", StatusPageUrl: at + "/info", HealthCheckUrl: at + "/health",
		DataCenterInfo: fargo.DataCenterInfo{Name: fargo.MyOwn},
		LeaseInfo:      fargo.LeaseInfo{RenewalIntervalInSecs: 30, DurationInSecs: 90},
	}
	ins.SetMetadataString("team", "payments")
	return ins
}

// runFargo drives the server at base with hudl/fargo, a real Eureka client,
// in JSON mode when useJSON and in its default XML mode otherwise.
func runFargo(t *testing.T, base string, useJSON bool) {
	conn := fargo.NewConn(base + "/eureka/v2")
	conn.UseJson = useJSON
	ins := FargoInstance("fargo-host", "FARGOAPP", "fargo-vip", "fargo-svip", 9000)
	check := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}

	check("RegisterInstance", conn.RegisterInstance(ins))

	app, err := conn.GetApp("FARGOAPP")
	check("GetApp", err)
	if len(app.Instances) != 1 || app.Instances[0].HostName != "fargo-host" || app.Instances[0].Port != 9000 ||
		!app.Instances[0].PortEnabled || app.Instances[0].SecurePort != 9443 || app.Instances[0].Status != fargo.UP {
		t.Fatalf("GetApp: %+v", app.Instances)
	}

	apps, err := conn.GetApps()
	check("GetApps", err)
	if a := apps["FARGOAPP"]; a == nil || len(a.Instances) != 1 {
		t.Fatalf("GetApps: %v", apps)
	}

	got, err := conn.GetInstance("FARGOAPP", ins.Id())
	check("GetInstance", err)
	if got.IPAddr != "127.0.0.1" || got.VipAddress != "fargo-vip" || got.HomePageUrl != "http://127.0.0.1:9000/" {
		t.Fatalf("GetInstance: %+v", got)
	}
	if team, err := got.Metadata.GetString("team"); err != nil || team != "payments" {
		t.Fatalf("metadata team = %q, %v", team, err)
	}

	check("HeartBeatInstance", conn.HeartBeatInstance(ins))

	check("UpdateInstanceStatus", conn.UpdateInstanceStatus(ins, fargo.OUTOFSERVICE))
	got, err = conn.GetInstance("FARGOAPP", ins.Id())
	check("GetInstance after status", err)
	if got.Status != fargo.OUTOFSERVICE || got.Overriddenstatus != fargo.OUTOFSERVICE {
		t.Fatalf("status %q overridden %q", got.Status, got.Overriddenstatus)
	}

	check("AddMetadataString", conn.AddMetadataString(ins, "zone", "zone-a"))
	got, err = conn.GetInstance("FARGOAPP", ins.Id())
	check("GetInstance after metadata", err)
	if zone, err := got.Metadata.GetString("zone"); err != nil || zone != "zone-a" {
		t.Fatalf("metadata zone = %q, %v", zone, err)
	}
	if team, _ := got.Metadata.GetString("team"); team != "payments" {
		t.Fatalf("metadata update dropped a key: team = %q", team)
	}

	byVIP, err := conn.GetInstancesByVIPAddress("fargo-vip", false)
	check("GetInstancesByVIPAddress", err)
	if len(byVIP) != 1 || byVIP[0].HostName != "fargo-host" {
		t.Fatalf("by VIP: %+v", byVIP)
	}
	bySVIP, err := conn.GetInstancesByVIPAddress("fargo-svip", true)
	check("GetInstancesByVIPAddress secure", err)
	if len(bySVIP) != 1 {
		t.Fatalf("by secure VIP: %+v", bySVIP)
	}

	check("DeregisterInstance", conn.DeregisterInstance(ins))
	if _, err := conn.GetInstance("FARGOAPP", ins.Id()); err == nil {
		t.Fatal("instance still readable after DeregisterInstance")
	}
	if err := conn.HeartBeatInstance(ins); err == nil {
		t.Fatal("heartbeat of a deregistered instance succeeded")
	}
}
