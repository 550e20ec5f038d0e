package replication

import (
	"context"
	"fmt"
	"sync"

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
	peers  []*peer
	client *eurekahttp.Client
	log    *zap.Logger

	unsubscribe func()
	synced      chan struct{}
	syncOnce    sync.Once
	life        context.Context // ends at Stop: a background sync's
	end         context.CancelFunc
	stop        chan struct{}
	wg          sync.WaitGroup
	once        sync.Once
}

// New sets up replication from store to cfg.Peers (minus this node) and
// starts queueing the Store's client writes for them. Call Start and
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
		store: store, cfg: cfg, log: cfg.Logger, stop: make(chan struct{}), synced: make(chan struct{}),
		client: eurekahttp.NewClient(eurekahttp.Config{ReadTimeout: cfg.Timeout, MaxBodySize: cfg.MaxResponseBytes,
			MaxBodySizeSetting: cfg.MaxResponseBytesSetting, UserAgent: "eurekagate-replication", TLS: cfg.TLS}),
	}
	p.life, p.end = context.WithCancel(context.Background())
	var self eureka.ServiceURL
	if cfg.Self != "" {
		var err error
		if self, err = eureka.ParseServiceURL(cfg.Self); err != nil {
			return nil, fmt.Errorf("self URL %q: %w", cfg.Self, err)
		}
	}
	seen := map[string]bool{}
	for _, raw := range cfg.Peers {
		u, err := eureka.ParseServiceURL(raw)
		if err != nil {
			return nil, fmt.Errorf("peer URL %q: %w", raw, err)
		}
		if u.Base == self.Base || isSelfAddr(u.Host, cfg.SelfAddrs) || seen[u.Base] {
			continue
		}
		seen[u.Base] = true
		p.peers = append(p.peers, &peer{url: u, tasks: map[string]*task{}, wake: make(chan struct{}, 1)})
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
			for _, pe := range p.peers {
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
	for _, pe := range p.peers {
		if !pe.self.Load() {
			pe.enqueue(it, now, p.cfg)
		}
	}
}

// Start runs one sender per peer until Stop.
func (p *Peers) Start() {
	for _, pe := range p.peers {
		p.wg.Add(1)
		go p.send(pe)
	}
}

// Stop stops queueing the Store's writes, stops the senders and waits for
// them. Queued tasks are dropped.
func (p *Peers) Stop() {
	p.once.Do(func() {
		p.unsubscribe()
		p.end()
		close(p.stop)
	})
	p.wg.Wait()
	p.client.Close()
}
