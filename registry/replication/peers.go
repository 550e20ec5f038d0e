package replication

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"go.uber.org/zap"

	"github.com/eurekagate/eurekagate/eureka"
	"github.com/eurekagate/eurekagate/internal/eurekahttp"
	"github.com/eurekagate/eurekagate/registry"
)

// Peers replicates a Store's client writes to the other nodes: a queue per
// peer, deduplicated by task ("register#ORDERS/h1"), sent in batches to
// POST {peer}peerreplication/batch/. It consumes the Store's change
// stream (registrations, cancels, status overrides and their deletion,
// metadata updates) and its heartbeats, and sends only what the Store's
// clients wrote: never what a peer replicated, never evictions, which
// each node makes by itself.
type Peers struct {
	store  *registry.Store
	cfg    Config
	client *eurekahttp.Client
	log    *zap.Logger
	self   eureka.ServiceURL

	// members are the current peers, read without a lock on the write
	// path; membership (membership.go) changes them.
	members atomic.Pointer[[]*peer]
	ms      membership

	unsubscribe func()
	synced      chan struct{}
	syncOnce    sync.Once
	copied      chan struct{}
	copyOnce    sync.Once
	life        context.Context // ends at Stop: a background sync's
	end         context.CancelFunc
	stop        chan struct{}
	wg          sync.WaitGroup
	once        sync.Once
}

// New sets up replication from store to cfg.Peers and the peers
// cfg.PeersDNS gives (minus this node) and starts queueing the Store's
// client writes for them; SetPeers changes them at run time. Call Start and
// StartSync (or SyncFrom, which returns when the sync is done); Stop ends
// them.
func New(store *registry.Store, cfg Config) (*Peers, error) {
	if cfg.CancelTTL <= 0 {
		cfg.CancelTTL = store.Config().DeltaRetention
	}
	cfg = cfg.withDefaults()
	if cfg.Logger == nil {
		cfg.Logger = store.Config().Logger
	}
	p := &Peers{
		store: store, cfg: cfg, log: cfg.Logger, stop: make(chan struct{}), synced: make(chan struct{}), copied: make(chan struct{}),
		client: eurekahttp.NewClient(eurekahttp.Config{ReadTimeout: cfg.Timeout, MaxBodySize: cfg.MaxResponseBytes,
			MaxBodySizeSetting: cfg.MaxResponseBytesSetting, UserAgent: "eurekagate-replication", TLS: cfg.TLS}),
	}
	p.life, p.end = context.WithCancel(context.Background())
	if cfg.Self != "" {
		var err error
		if p.self, err = eureka.ParseServiceURL(cfg.Self); err != nil {
			return nil, fmt.Errorf("self URL %q: %w", cfg.Self, err)
		}
	}
	if err := p.initMembership(); err != nil {
		return nil, err
	}
	unChanges, unHeartbeats := store.Subscribe(p.changed), store.OnHeartbeat(p.heartbeat)
	p.unsubscribe = func() { unChanges(); unHeartbeats() }
	return p, nil
}

func isSelfAddr(host string, addrs []string) bool {
	for _, a := range addrs {
		if a == host {
			return true
		}
	}
	return false
}

// changed turns a change made by this node's clients into the task Eureka
// replicates for it.
func (p *Peers) changed(c registry.Change) {
	if c.Replicated {
		if c.Kind == registry.Registered {
			// A peer's registration that the Store took over a cancel is
			// newer than it: a cancel still waiting for a peer (one that
			// was cut off, say) would remove that peer's live instance.
			for _, pe := range p.current() {
				pe.withdrawCancel(c.App, c.ID)
			}
		}
		return
	}
	it := Item{AppName: c.App, ID: c.ID, LastDirtyTimestamp: c.Instance.LastDirtyTimestamp, Status: c.Instance.Status.String()}
	switch c.Kind {
	case registry.Registered, registry.MetadataUpdated:
		it.Action, it.Instance = ActionRegister, c.Decorated() // a metadata update replicates as a Register, as in Eureka
	case registry.Cancelled:
		it = Item{Action: ActionCancel, AppName: c.App, ID: c.ID}
	case registry.StatusSet:
		it.Action = ActionStatusUpdate
	case registry.OverrideDeleted:
		it.Action = ActionDeleteStatusOverride
	default:
		return // evictions and status changes made by the override rules: each node makes its own
	}
	p.Replicate(it)
}

// heartbeat replicates a client's heartbeat, with the override the peers
// should hold.
func (p *Peers) heartbeat(hb registry.Heartbeat) {
	if hb.Replicated {
		return
	}
	it := Item{Action: ActionHeartbeat, AppName: hb.App, ID: hb.ID, LastDirtyTimestamp: hb.LastDirtyTimestamp, Status: hb.Status.String()}
	if hb.OverriddenStatus != eureka.StatusUnknown {
		it.OverriddenStatus = hb.OverriddenStatus.String()
	}
	p.Replicate(it)
}

// Replicate queues it for every peer. It never blocks.
func (p *Peers) Replicate(it Item) {
	now := p.cfg.Clock.Now()
	for _, pe := range p.current() {
		if !pe.self.Load() {
			pe.enqueue(it, now, p.cfg)
		}
	}
}

// Start runs one sender per peer, and the re-resolution of PeersDNS,
// until Stop. A peer that joins later gets its sender when it joins.
func (p *Peers) Start() {
	p.ms.mu.Lock()
	defer p.ms.mu.Unlock()
	if p.ms.started {
		return
	}
	p.ms.started = true
	for _, pe := range p.current() {
		p.startSender(pe)
	}
	p.wg.Add(1)
	go p.resolveLoop()
}

// Stop stops queueing the Store's writes, stops the senders and the
// re-resolution and waits for them. Queued tasks are dropped.
func (p *Peers) Stop() {
	p.once.Do(func() {
		p.ms.mu.Lock()
		p.ms.stopped = true
		p.ms.mu.Unlock()
		p.unsubscribe()
		p.end()
		close(p.stop)
	})
	p.wg.Wait()
	p.client.Close()
}
