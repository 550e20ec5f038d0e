package discovery

import (
	"fmt"
	"net"
	"os"
	"regexp"
	"slices"
	"strings"
)

// NetworkConfig chooses the address an instance registers when its
// InstanceConfig sets no IPAddr, as Spring Cloud's spring.cloud.inetutils.*
// properties do. The default is the first IPv4 address, neither loopback
// nor link-local, of the network interface with the lowest index that is
// up and not a loopback interface; 127.0.0.1 only if the machine has no
// such address. The zero value considers every interface and address.
type NetworkConfig struct {
	// IgnoredInterfaces are regular expressions matched against whole
	// interface names; a matching interface is skipped, such as "docker0"
	// or `veth.*` (spring.cloud.inetutils.ignored-interfaces). Default:
	// none skipped.
	IgnoredInterfaces []string
	// PreferredNetworks, if set, limits the choice to the addresses that
	// start with one of them or match one as a regular expression, such as
	// "192.168" or `10\.0\..*` (spring.cloud.inetutils.preferred-networks).
	// Default: any address.
	PreferredNetworks []string
	// UseOnlySiteLocalInterfaces limits the choice to private addresses:
	// 10.0.0.0/8, 172.16.0.0/12 and 192.168.0.0/16
	// (spring.cloud.inetutils.use-only-site-local-interfaces). Default:
	// false.
	UseOnlySiteLocalInterfaces bool
}

// validate reports an expression that does not compile.
func (nc NetworkConfig) validate() error {
	for _, list := range [][]string{nc.IgnoredInterfaces, nc.PreferredNetworks} {
		for _, expr := range list {
			if _, err := regexp.Compile("^(?:" + expr + ")$"); err != nil {
				return fmt.Errorf("discovery: network expression %q: %v", expr, err)
			}
		}
	}
	return nil
}

// netInterface is what the choice reads of a network interface.
type netInterface struct {
	name     string
	index    int
	up       bool
	loopback bool
	addrs    []net.IP
}

// systemInterfaces lists the machine's network interfaces. It only reads
// them: no traffic is sent.
func systemInterfaces() []netInterface {
	ifaces, err := net.Interfaces()
	if err != nil {
		return nil
	}
	out := make([]netInterface, 0, len(ifaces))
	for _, ifc := range ifaces {
		ni := netInterface{name: ifc.Name, index: ifc.Index,
			up: ifc.Flags&net.FlagUp != 0, loopback: ifc.Flags&net.FlagLoopback != 0}
		addrs, _ := ifc.Addrs()
		for _, a := range addrs {
			if ipn, ok := a.(*net.IPNet); ok {
				ni.addrs = append(ni.addrs, ipn.IP)
			}
		}
		out = append(out, ni)
	}
	return out
}

// chooseAddress picks the address to register from ifaces, as described
// on NetworkConfig, or returns "" if none qualifies.
func chooseAddress(ifaces []netInterface, nc NetworkConfig) string {
	ifaces = slices.Clone(ifaces)
	slices.SortStableFunc(ifaces, func(a, b netInterface) int { return a.index - b.index })
	for _, ifc := range ifaces {
		if !ifc.up || ifc.loopback || matchesAny(nc.IgnoredInterfaces, ifc.name) {
			continue
		}
		for _, ip := range ifc.addrs {
			ip4 := ip.To4()
			if ip4 == nil || ip4.IsLoopback() || ip4.IsLinkLocalUnicast() || ip4.IsUnspecified() {
				continue
			}
			if nc.UseOnlySiteLocalInterfaces && !ip4.IsPrivate() {
				continue
			}
			text := ip4.String()
			if len(nc.PreferredNetworks) > 0 && !preferred(nc.PreferredNetworks, text) {
				continue
			}
			return text
		}
	}
	return ""
}

// preferred reports whether addr starts with or matches one of networks.
func preferred(networks []string, addr string) bool {
	for _, n := range networks {
		if strings.HasPrefix(addr, n) || matchesAny([]string{n}, addr) {
			return true
		}
	}
	return false
}

// matchesAny reports whether s matches one of exprs as a whole.
func matchesAny(exprs []string, s string) bool {
	for _, e := range exprs {
		if re, err := regexp.Compile("^(?:" + e + ")$"); err == nil && re.MatchString(s) {
			return true
		}
	}
	return false
}

// defaultAddress fills in the address and host name an instance
// registers: IPAddr chosen as NetworkConfig says, and HostName the
// operating system's host name (IPAddr with PreferIPAddress, or if the
// host name is unknown). An IPAddr that is set is kept, and is also the
// default HostName.
func (ic *InstanceConfig) defaultAddress(ifaces func() []netInterface) {
	if ic.IPAddr == "" {
		ic.IPAddr = chooseAddress(ifaces(), ic.Network)
		if ic.IPAddr == "" {
			ic.IPAddr = "127.0.0.1"
		}
		if ic.HostName == "" && !ic.PreferIPAddress {
			ic.HostName, _ = os.Hostname()
		}
	}
	if ic.HostName == "" || ic.PreferIPAddress {
		ic.HostName = ic.IPAddr
	}
}
