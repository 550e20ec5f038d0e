package httpapi

import (
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
)

// HostGuard keeps a page from reading or writing the registry through
// DNS rebinding. A registry that listens on loopback only and has no
// credentials (a developer's machine) trusts that only local programs
// reach it; a page at attacker.example whose name is then rebound to
// 127.0.0.1 is same-origin with it, so the write guard's header does not
// stop it. Its requests carry the page's Host, which the guard refuses
// (403): the registry answers only a Host that is a loopback name or
// address (localhost, *.localhost, 127.0.0.0/8, [::1]), one of its own
// names (the listen address's host, the machine's host name), or one of
// the allowed hosts. Servers that listen on other addresses or have
// credentials need no guard: the caller decides (Server.Start, Caddy's
// eureka app).
type HostGuard struct {
	allowed []allowedHost
	setting string // named in the refusal: "-allowed-hosts", "allowed_hosts"
}

// allowedHost is a host (lower case, IPv6 without brackets) and a port,
// "" for any.
type allowedHost struct{ host, port string }

// ParseAllowedHosts reads HOST[:PORT] entries ([::1]:8761 for IPv6 with
// a port); a host without a port matches any port. An entry that is not
// a host (empty, a scheme, a path, a bad port) is an error naming it.
func ParseAllowedHosts(entries []string) error {
	_, err := parseAllowedHosts(entries)
	return err
}

func parseAllowedHosts(entries []string) ([]allowedHost, error) {
	var out []allowedHost
	for _, e := range entries {
		host, port, ok := splitHost(strings.TrimSpace(e))
		switch {
		case !ok || host == "" || strings.ContainsAny(e, "/@?# \t*"):
			return nil, fmt.Errorf("%q is not HOST or HOST:PORT ([::1]:PORT for IPv6)", e)
		case port != "":
			if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
				return nil, fmt.Errorf("%q: the port is not a number from 1 to 65535", e)
			}
		}
		out = append(out, allowedHost{strings.ToLower(host), port})
	}
	return out, nil
}

// NewHostGuard returns the guard that also answers allowed (HOST[:PORT]
// entries, as ParseAllowedHosts reads them) and the server's own names
// (any port), and names setting in its refusals.
func NewHostGuard(allowed []string, setting string, own ...string) (*HostGuard, error) {
	hosts, err := parseAllowedHosts(allowed)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", setting, err)
	}
	for _, name := range own {
		if name != "" {
			hosts = append(hosts, allowedHost{host: strings.ToLower(strings.TrimSuffix(name, "."))})
		}
	}
	return &HostGuard{allowed: hosts, setting: setting}, nil
}

// Allows reports whether the registry answers a request with this Host
// header. A request without one (HTTP/1.0) is not a browser's.
func (g *HostGuard) Allows(hostHeader string) bool {
	if hostHeader == "" {
		return true
	}
	host, port, ok := splitHost(hostHeader)
	if !ok {
		return false
	}
	host = strings.TrimSuffix(host, ".")
	if isLoopbackName(host) {
		return true
	}
	for _, a := range g.allowed {
		if strings.EqualFold(a.host, host) && (a.port == "" || a.port == port) {
			return true
		}
	}
	return false
}

// Refusal is the 403's text for a request with this Host header.
func (g *HostGuard) Refusal(hostHeader string) string {
	if len(hostHeader) > 100 {
		hostHeader = hostHeader[:100] + "..."
	}
	return "Host " + strconv.Quote(hostHeader) + " is not answered: this registry listens on loopback without credentials, " +
		"so it answers loopback names and its own only (a page whose name is rebound to 127.0.0.1 must not reach it); " +
		"to answer this name, add it to " + g.setting + " (HOST[:PORT])"
}

// isLoopbackName reports whether host is localhost, a name under
// .localhost (RFC 6761: they resolve to loopback only), or a loopback
// address.
func isLoopbackName(host string) bool {
	if strings.EqualFold(host, "localhost") || len(host) > len(".localhost") && strings.EqualFold(host[len(host)-len(".localhost"):], ".localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.Unmap().IsLoopback()
}

// splitHost splits a Host header's host and port: name, name:port, an
// IPv4 address with or without a port, [v6] or [v6]:port. An IPv6
// address without brackets is taken whole.
func splitHost(h string) (host, port string, ok bool) {
	if strings.HasPrefix(h, "[") {
		end := strings.IndexByte(h, ']')
		if end < 0 {
			return "", "", false
		}
		host, rest := h[1:end], h[end+1:]
		if rest == "" {
			return host, "", true
		}
		if rest[0] != ':' {
			return "", "", false
		}
		return host, rest[1:], true
	}
	if strings.Count(h, ":") > 1 {
		return h, "", true
	}
	host, port, _ = strings.Cut(h, ":")
	return host, port, true
}

// listensOnLoopback reports whether a listener's address is a loopback
// one: only then does a server guard its hosts.
func listensOnLoopback(a net.Addr) bool {
	ip := tcpAddr(a)
	return ip.IsValid() && ip.Unmap().IsLoopback()
}
