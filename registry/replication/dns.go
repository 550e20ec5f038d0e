package replication

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// dnsName is one entry of PeersDNS: a DNS name whose records are the
// peers. http://NAME:PORT/eureka/ (or https://) makes each A and AAAA
// record of NAME a peer at that port, scheme and path;
// srv://NAME/eureka/ (srv+https:// for https) makes each SRV record's
// target and port a peer at that path.
type dnsName struct {
	raw                            string
	srv                            bool
	scheme, user, host, port, path string
}

// parseDNSName reads one PeersDNS entry, refusing what would not give a
// peer URL, with the reason.
func parseDNSName(raw string) (dnsName, error) {
	bad := func(reason string) (dnsName, error) {
		return dnsName{}, fmt.Errorf("peer DNS name %q: %s", raw, reason)
	}
	u, err := url.Parse(raw)
	if err != nil {
		return bad(err.Error())
	}
	d := dnsName{raw: raw, host: u.Hostname(), port: u.Port(), path: u.EscapedPath()}
	switch u.Scheme {
	case "http", "https":
		d.scheme = u.Scheme
	case "srv":
		d.scheme, d.srv = "http", true
	case "srv+https":
		d.scheme, d.srv = "https", true
	default:
		return bad("the scheme is http://NAME:PORT/eureka/ (A and AAAA records) or srv://NAME/eureka/ (SRV records; srv+https:// for https)")
	}
	switch {
	case d.host == "":
		return bad("no DNS name")
	case net.ParseIP(d.host) != nil:
		return bad("an address, not a DNS name; list it with the peers' URLs")
	case d.srv && d.port != "":
		return bad("an SRV record gives the port: leave it out")
	case !d.srv && d.port == "":
		return bad("no port: give the port the peers listen on, such as :8761")
	case u.RawQuery != "" || u.Fragment != "":
		return bad("a query or a fragment has no place in a service URL")
	}
	if u.User != nil {
		d.user = u.User.String() + "@"
	}
	return d, nil
}

// lookup returns the peer URLs the name's records give now, sorted; none
// for a name that does not exist.
func (d dnsName) lookup(ctx context.Context, r *net.Resolver) ([]string, error) {
	var out []string
	if d.srv {
		_, srvs, err := r.LookupSRV(ctx, "", "", d.host)
		if err != nil && !notFound(err) {
			return nil, err
		}
		for _, s := range srvs {
			out = append(out, d.url(strings.TrimSuffix(s.Target, "."), strconv.Itoa(int(s.Port))))
		}
	} else {
		ips, err := r.LookupIPAddr(ctx, d.host)
		if err != nil && !notFound(err) {
			return nil, err
		}
		for _, ip := range ips {
			out = append(out, d.url(ip.IP.String(), d.port))
		}
	}
	slices.Sort(out)
	out = slices.Compact(out)
	if len(out) > MaxDNSPeers {
		return nil, fmt.Errorf("%d records, more than the %d peers a DNS name may give", len(out), MaxDNSPeers)
	}
	return out, nil
}

// MaxDNSPeers is the most peers one DNS name may give: an answer with
// more records is refused as a failed look-up (the name's last answer
// stays), so that a DNS server's answer cannot start a sender per
// record by the thousand.
const MaxDNSPeers = 64

func (d dnsName) url(host, port string) string {
	return d.scheme + "://" + d.user + net.JoinHostPort(host, port) + d.path
}

func notFound(err error) bool {
	var de *net.DNSError
	return errors.As(err, &de) && de.IsNotFound
}

// newResolver returns the resolver that sends every look-up to server
// (host:port), or the system's for "".
func newResolver(server string) *net.Resolver {
	if server == "" {
		return net.DefaultResolver
	}
	return &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
		var d net.Dialer
		c, err := d.DialContext(ctx, network, server)
		if err != nil {
			return nil, err
		}
		// Go's resolver reads an answer until a deadline of its own (5 s),
		// even after its look-up is given up: closing the connection then
		// ends a look-up that a stopped membership or a timed-out sync
		// abandoned, instead of leaving its goroutines waiting.
		context.AfterFunc(ctx, func() { c.Close() })
		return c, nil
	}}
}

// CheckDNSName refuses a PeersDNS entry that would not give peer URLs,
// with the reason, as New and SetPeers would.
func CheckDNSName(raw string) error {
	_, err := parseDNSName(raw)
	return err
}
