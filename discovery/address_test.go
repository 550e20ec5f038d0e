package discovery

import (
	"net"
	"os"
	"strings"
	"testing"
)

func ips(list ...string) []net.IP {
	out := make([]net.IP, len(list))
	for n, s := range list {
		out[n] = net.ParseIP(s)
	}
	return out
}

// The address is chosen as Spring's InetUtils does: the lowest-index
// interface that is up, not loopback and not ignored, its first IPv4
// address that is neither loopback nor link-local, within the preferred
// networks.
func TestChooseAddress(t *testing.T) {
	machine := []netInterface{
		{name: "lo", index: 1, up: true, loopback: true, addrs: ips("127.0.0.1", "::1")},
		{name: "eth1", index: 3, up: true, addrs: ips("10.1.2.3")},
		{name: "docker0", index: 4, up: true, addrs: ips("172.17.0.1")},
		{name: "eth0", index: 2, up: true, addrs: ips("fe80::1", "169.254.3.4", "203.0.113.7")},
		{name: "wlan0", index: 0, up: false, addrs: ips("192.168.1.9")},
	}
	for _, tc := range []struct {
		name string
		nc   NetworkConfig
		want string
	}{
		{"lowest index up, first usable IPv4", NetworkConfig{}, "203.0.113.7"},
		{"ignored interface", NetworkConfig{IgnoredInterfaces: []string{"eth0"}}, "10.1.2.3"},
		{"ignored by expression", NetworkConfig{IgnoredInterfaces: []string{"eth.*"}}, "172.17.0.1"},
		{"preferred prefix", NetworkConfig{PreferredNetworks: []string{"172.17"}}, "172.17.0.1"},
		{"preferred expression", NetworkConfig{PreferredNetworks: []string{`10\..*`}}, "10.1.2.3"},
		{"site-local only", NetworkConfig{UseOnlySiteLocalInterfaces: true}, "10.1.2.3"},
		{"nothing qualifies", NetworkConfig{PreferredNetworks: []string{"198.51"}}, ""},
	} {
		if got := chooseAddress(machine, tc.nc); got != tc.want {
			t.Errorf("%s: chose %q, want %q", tc.name, got, tc.want)
		}
	}
	if got := chooseAddress(machine[:1], NetworkConfig{}); got != "" {
		t.Errorf("loopback only: chose %q", got)
	}
}

// Without IPAddr the instance registers the chosen address with the OS host
// name; PreferIPAddress registers the address as the host name; a machine
// without a usable address falls back to loopback; a given IPAddr is kept.
func TestDefaultAddress(t *testing.T) {
	host, _ := os.Hostname()
	fake := func() []netInterface {
		return []netInterface{{name: "eth0", index: 2, up: true, addrs: ips("203.0.113.7")}}
	}
	ic := InstanceConfig{}
	ic.defaultAddress(fake)
	if ic.IPAddr != "203.0.113.7" || (host != "" && ic.HostName != host) {
		t.Errorf("default: %q %q, want 203.0.113.7 and %q", ic.IPAddr, ic.HostName, host)
	}
	ic = InstanceConfig{PreferIPAddress: true}
	ic.defaultAddress(fake)
	if ic.IPAddr != "203.0.113.7" || ic.HostName != "203.0.113.7" {
		t.Errorf("PreferIPAddress: %q %q", ic.IPAddr, ic.HostName)
	}
	ic = InstanceConfig{}
	ic.defaultAddress(func() []netInterface { return nil })
	if ic.IPAddr != "127.0.0.1" {
		t.Errorf("no interface: %q", ic.IPAddr)
	}
	ic = InstanceConfig{IPAddr: "10.0.0.1"}
	ic.defaultAddress(fake)
	if ic.IPAddr != "10.0.0.1" || ic.HostName != "10.0.0.1" {
		t.Errorf("given IPAddr: %q %q", ic.IPAddr, ic.HostName)
	}
}

// On this machine, the default registration address is not loopback when
// the machine has a non-loopback interface with an IPv4 address. The test
// only inspects the address chosen; nothing is sent to it.
func TestDefaultAddressIsNotLoopback(t *testing.T) {
	ifaces, err := net.Interfaces()
	if err != nil {
		t.Fatal(err)
	}
	var usable []string
	for _, ifc := range ifaces {
		if ifc.Flags&net.FlagUp == 0 || ifc.Flags&net.FlagLoopback != 0 {
			continue
		}
		addrs, _ := ifc.Addrs()
		for _, a := range addrs {
			if ipn, ok := a.(*net.IPNet); ok && ipn.IP.To4() != nil && !ipn.IP.IsLoopback() && !ipn.IP.IsLinkLocalUnicast() {
				usable = append(usable, ipn.IP.String())
			}
		}
	}
	if len(usable) == 0 {
		t.Skip("this machine has no non-loopback IPv4 address")
	}
	cfg := Config{Instance: &InstanceConfig{AppName: "orders"}}.withDefaults()
	ic := cfg.Instance
	if ip := net.ParseIP(ic.IPAddr); ip == nil || ip.IsLoopback() {
		t.Fatalf("default IPAddr %q is loopback; the machine has %v", ic.IPAddr, usable)
	}
	if !strings.Contains(strings.Join(usable, " "), ic.IPAddr) {
		t.Errorf("default IPAddr %q is not one of the machine's addresses %v", ic.IPAddr, usable)
	}
	if host, err := os.Hostname(); err == nil && ic.HostName != host {
		t.Errorf("default HostName %q, want the OS host name %q", ic.HostName, host)
	}
	if !strings.HasPrefix(ic.InstanceID, ic.HostName+":orders:") {
		t.Errorf("default InstanceID %q", ic.InstanceID)
	}
}

// A network expression that does not compile is refused by New.
func TestBadNetworkExpression(t *testing.T) {
	_, err := New(Config{Instance: &InstanceConfig{AppName: "a", Network: NetworkConfig{IgnoredInterfaces: []string{"veth("}}}})
	if err == nil || !strings.Contains(err.Error(), "veth(") {
		t.Fatalf("err = %v", err)
	}
}
