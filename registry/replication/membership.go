package replication

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"go.uber.org/zap"

	"github.com/eurekagate/eurekagate/eureka"
	"github.com/eurekagate/eurekagate/internal/tick"
)

// membership is where the peers come from and what changes them at run
// time: the listed URLs, the DNS names and each name's last answer.
type membership struct {
	mu       sync.Mutex // serialises changes of the members
	started  bool       // Start has run: a peer that joins gets a sender
	stopped  bool       // Stop has run: no sender starts any more
	static   []string
	names    []dnsName
	resolved map[string][]string // a DNS name's last answer, by the name as configured
	resolver *net.Resolver

	wake        chan struct{} // asks the resolve loop to look the names up now
	lastResolve atomic.Int64  // unix nanos of the last look-up
	leftDropped atomic.Uint64 // tasks dropped with the queues of peers that left
}

// minResolveGap is the least time between two look-ups that failed
// connections ask for: a peer that refuses every 100 ms does not have
// the names looked up at that pace.
const minResolveGap = time.Second

// current returns the members: the peers replication goes to now. The
// slice is never modified; a change of membership replaces it.
func (p *Peers) current() []*peer {
	if m := p.members.Load(); m != nil {
		return *m
	}
	return nil
}

// hasDNSNames reports whether the members come from DNS names too.
func (p *Peers) hasDNSNames() bool {
	p.ms.mu.Lock()
	defer p.ms.mu.Unlock()
	return len(p.ms.names) > 0
}

// initMembership checks Config's peers and DNS names and takes the
// listed peers as the first members; the names are looked up by
// SyncFrom and the resolve loop.
func (p *Peers) initMembership() error {
	names, err := checkMembers(p.cfg.Peers, p.cfg.PeersDNS)
	if err != nil {
		return err
	}
	p.ms.wake = make(chan struct{}, 1)
	p.ms.resolver = newResolver(p.cfg.DNSResolver)
	p.ms.resolved = map[string][]string{}
	p.ms.mu.Lock()
	defer p.ms.mu.Unlock()
	p.ms.static, p.ms.names = p.cfg.Peers, names
	p.applyLocked()
	return nil
}

// checkMembers checks peer URLs and DNS names, and returns the names
// parsed.
func checkMembers(peers, peersDNS []string) ([]dnsName, error) {
	for _, raw := range peers {
		if _, err := eureka.ParseServiceURL(raw); err != nil {
			return nil, fmt.Errorf("peer URL %q: %w", raw, err)
		}
	}
	names := make([]dnsName, 0, len(peersDNS))
	for _, raw := range peersDNS {
		n, err := parseDNSName(raw)
		if err != nil {
			return nil, err
		}
		names = append(names, n)
	}
	return names, nil
}

// SetPeers changes the membership at run time: peers and peersDNS take
// the place of Config.Peers and Config.PeersDNS. A peer still listed
// keeps its queue and its counters; a peer that joins gets every change
// from then on (a write made before reaches it with the instance's next
// heartbeat, which it answers 404, as Eureka repairs); a peer that
// leaves gets nothing more: its sender stops and its queue is dropped
// (counted in LeftDropped). New DNS names are looked up at once by the
// resolve loop (after Start). Nothing changes if a URL or a name is
// refused.
func (p *Peers) SetPeers(peers, peersDNS []string) error {
	names, err := checkMembers(peers, peersDNS)
	if err != nil {
		return err
	}
	p.ms.mu.Lock()
	p.ms.static, p.ms.names = append([]string(nil), peers...), names
	for raw := range p.ms.resolved {
		if !listed(names, raw) {
			delete(p.ms.resolved, raw)
		}
	}
	p.applyLocked()
	p.ms.mu.Unlock()
	if len(names) > 0 {
		p.wakeResolve()
	}
	return nil
}

// LeftDropped is how many tasks were dropped with the queues of peers
// that left the membership.
func (p *Peers) LeftDropped() uint64 {
	if p == nil {
		return 0
	}
	return p.ms.leftDropped.Load()
}

func listed(names []dnsName, raw string) bool {
	for _, n := range names {
		if n.raw == raw {
			return true
		}
	}
	return false
}

// applyLocked makes the members those the listed URLs and the names'
// last answers give, this node left out (by Self and SelfAddrs; by its
// identity once a peer answers). The caller holds p.ms.mu.
func (p *Peers) applyLocked() {
	old := p.current()
	// A peer is kept while its URL and credentials are: new credentials
	// make a new peer, whose sender sends them.
	key := func(u eureka.ServiceURL) string { return u.Base + " " + u.Authorization }
	byKey := make(map[string]*peer, len(old))
	for _, pe := range old {
		byKey[key(pe.url)] = pe
	}
	urls := append([]string(nil), p.ms.static...)
	for _, n := range p.ms.names {
		urls = append(urls, p.ms.resolved[n.raw]...)
	}
	next := make([]*peer, 0, len(urls))
	kept, bases := map[string]bool{}, map[string]bool{}
	for _, raw := range urls {
		u, err := eureka.ParseServiceURL(raw)
		if err != nil {
			p.log.Warn("a peer URL a DNS name gave does not parse; left out", zap.String("peer", raw), zap.Error(err))
			continue
		}
		if (p.self.Base != "" && u.Base == p.self.Base) || isSelfAddr(u.Host, p.cfg.SelfAddrs) || bases[u.Base] {
			continue
		}
		kept[key(u)], bases[u.Base] = true, true
		pe := byKey[key(u)]
		if pe == nil {
			pe = p.newPeer(u)
			if p.members.Load() != nil {
				p.log.Info("peer joined; replicating to it from now on", zap.String("peer", u.Base))
			}
			if p.ms.started {
				p.startSender(pe)
			}
		}
		next = append(next, pe)
	}
	p.members.Store(&next)
	for _, pe := range old {
		if !kept[key(pe.url)] {
			p.leave(pe)
		}
	}
}

// newPeer is an empty queue for u, whose sender ends with the Peers.
func (p *Peers) newPeer(u eureka.ServiceURL) *peer {
	pe := &peer{url: u, tasks: map[string]*task{}, wake: make(chan struct{}, 1), urgent: make(chan struct{}, 1), done: make(chan struct{})}
	pe.ctx, pe.cancel = context.WithCancel(p.life)
	return pe
}

// startSender runs pe's sender. The caller holds p.ms.mu.
func (p *Peers) startSender(pe *peer) {
	if p.ms.stopped {
		return
	}
	pe.running = true
	p.wg.Add(1)
	go p.send(pe)
}

// leave stops pe's sender, waits for it and drops its queue, counted.
// The caller holds p.ms.mu.
func (p *Peers) leave(pe *peer) {
	pe.cancel()
	if pe.running {
		<-pe.done
	}
	n := pe.drop()
	p.ms.leftDropped.Add(uint64(n))
	if !pe.self.Load() {
		p.log.Info("peer left; not replicating to it any more, its queue dropped", zap.String("peer", pe.url.Base), zap.Int("dropped", n))
	}
}

// resolveLoop looks the DNS names up at start, every ResolveInterval and
// when a connection to a peer fails (at most once per minResolveGap),
// until Stop.
func (p *Peers) resolveLoop() {
	defer p.wg.Done()
	p.resolve(p.life)
	tick.Every(p.cfg.ResolveInterval, p.stop, p.ms.wake, func() { _ = p.resolve(p.life) })
}

// resolve looks each DNS name up and applies the members they give. A
// name whose look-up fails keeps its last answer, so that a DNS server's
// hiccup leaves the cluster as it was; a name that does not exist, or has
// no record, gives no peer. It returns how many look-ups failed.
func (p *Peers) resolve(ctx context.Context) (failed int) {
	p.ms.mu.Lock()
	names := p.ms.names
	p.ms.mu.Unlock()
	if len(names) == 0 {
		return 0
	}
	p.ms.lastResolve.Store(time.Now().UnixNano())
	ctx, cancel := context.WithTimeout(ctx, p.cfg.Timeout)
	defer cancel()
	got := make(map[string][]string, len(names))
	for _, n := range names {
		urls, err := n.lookup(ctx, p.ms.resolver)
		if err != nil {
			failed++
			if ctx.Err() == nil {
				p.log.Warn("looking up the peers' DNS name failed; its last answer stays", zap.String("name", n.raw), zap.Error(err))
			}
			continue
		}
		got[n.raw] = urls
	}
	p.ms.mu.Lock()
	defer p.ms.mu.Unlock()
	for raw, urls := range got {
		if listed(p.ms.names, raw) {
			p.ms.resolved[raw] = urls
		}
	}
	p.applyLocked()
	return failed
}

// resolveSoon asks for a look-up of the DNS names, unless one was made
// less than minResolveGap ago.
func (p *Peers) resolveSoon() {
	if time.Since(time.Unix(0, p.ms.lastResolve.Load())) >= minResolveGap {
		p.wakeResolve()
	}
}

func (p *Peers) wakeResolve() {
	select {
	case p.ms.wake <- struct{}{}:
	default:
	}
}

// connectFailed reports whether err is a connection that could not be
// made: refused, unreachable, or a dial that failed or timed out.
func connectFailed(err error) bool {
	var op *net.OpError
	return errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.EHOSTUNREACH) ||
		errors.Is(err, syscall.ENETUNREACH) || (errors.As(err, &op) && op.Op == "dial")
}
