package testkit

import (
	"net"
	"strings"
	"sync"
	"testing"

	"github.com/miekg/dns"
)

// DNS is a DNS server on loopback whose records a test sets and changes:
// A records and SRV records by name, NXDOMAIN for any other name. It
// serves UDP until the test ends.
type DNS struct {
	srv  *dns.Server
	mu   sync.Mutex
	a    map[string][]net.IP
	srvs map[string][]*net.SRV
	// queries counts the questions asked, by name and type ("NAME A").
	queries map[string]int
}

// NewDNS starts a DNS server on 127.0.0.1 at a port the system gives.
func NewDNS(t testing.TB) *DNS {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	d := &DNS{a: map[string][]net.IP{}, srvs: map[string][]*net.SRV{}, queries: map[string]int{}}
	started := make(chan struct{})
	d.srv = &dns.Server{PacketConn: pc, Handler: dns.HandlerFunc(d.serve), NotifyStartedFunc: func() { close(started) }}
	done := make(chan struct{})
	go func() {
		defer close(done)
		d.srv.ActivateAndServe()
	}()
	<-started
	t.Cleanup(func() {
		d.srv.Shutdown()
		<-done
	})
	return d
}

// Addr is the server's host:port.
func (d *DNS) Addr() string { return d.srv.PacketConn.LocalAddr().String() }

// SetA makes ips the A records of name (none: the name does not exist).
func (d *DNS) SetA(name string, ips ...string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	var list []net.IP
	for _, ip := range ips {
		list = append(list, net.ParseIP(ip).To4())
	}
	d.a[dns.Fqdn(strings.ToLower(name))] = list
}

// SetSRV makes targets ("host:port") the SRV records of name.
func (d *DNS) SetSRV(name string, targets ...string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	var list []*net.SRV
	for _, hp := range targets {
		host, port, _ := net.SplitHostPort(hp)
		p, _ := net.LookupPort("tcp", port)
		list = append(list, &net.SRV{Target: dns.Fqdn(host), Port: uint16(p), Weight: 1})
	}
	d.srvs[dns.Fqdn(strings.ToLower(name))] = list
}

// Queries is how many times name was asked for records of type typ
// ("A", "AAAA", "SRV").
func (d *DNS) Queries(name, typ string) int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.queries[strings.ToLower(name)+" "+typ]
}

func (d *DNS) serve(w dns.ResponseWriter, req *dns.Msg) {
	m := new(dns.Msg)
	m.SetReply(req)
	m.Authoritative = true
	d.mu.Lock()
	for _, q := range req.Question {
		name := strings.ToLower(q.Name)
		d.queries[strings.TrimSuffix(name, ".")+" "+dns.TypeToString[q.Qtype]]++
		ips, hasA := d.a[name]
		srvs, hasSRV := d.srvs[name]
		if (!hasA || len(ips) == 0) && (!hasSRV || len(srvs) == 0) {
			m.Rcode = dns.RcodeNameError
			continue
		}
		hdr := dns.RR_Header{Name: q.Name, Class: dns.ClassINET, Ttl: 1}
		switch q.Qtype {
		case dns.TypeA:
			for _, ip := range ips {
				h := hdr
				h.Rrtype = dns.TypeA
				m.Answer = append(m.Answer, &dns.A{Hdr: h, A: ip})
			}
		case dns.TypeSRV:
			for _, s := range srvs {
				h := hdr
				h.Rrtype = dns.TypeSRV
				m.Answer = append(m.Answer, &dns.SRV{Hdr: h, Priority: s.Priority, Weight: s.Weight, Port: s.Port, Target: s.Target})
			}
		}
	}
	d.mu.Unlock()
	w.WriteMsg(m)
}
