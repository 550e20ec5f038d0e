package registry

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/valyala/fasthttp"
	"go.uber.org/zap"

	"github.com/eurekagate/eurekagate/eureka"
)

// PeerConfig configures replication to the other nodes of a registry
// cluster, with Eureka's own peer protocol, so nodes can also join a
// cluster of Java Eureka servers.
type PeerConfig struct {
	// Peers are the service URLs of the other nodes, such as
	// http://eureka-2:8761/eureka/. User info in a URL is sent as basic
	// auth. This node's own URL may be listed: it is recognised and skipped.
	Peers []string
	// Self is this node's own service URL, to recognise it among Peers.
	// Entries whose host:port is one of SelfAddrs are skipped too.
	Self      string
	SelfAddrs []string
	// BatchSize is the most tasks in one batch. Default 250.
	BatchSize int
	// MaxBatchDelay is how long a task waits for others to join its batch.
	// Default 500ms.
	MaxBatchDelay time.Duration
	// MaxQueue bounds each peer's queue; on overflow the oldest task is
	// dropped. Default 10000.
	MaxQueue int
	// TaskTTL is how long a task may wait before it is dropped as stale.
	// Default 30s (Eureka's renewal interval and maxTimeForReplication).
	TaskTTL time.Duration
	// CongestionRetry is the wait before resending a batch that got 503 or
	// timed out. Default 1s. NetworkRetry is the wait after other network
	// errors. Default 100ms.
	CongestionRetry, NetworkRetry time.Duration
	// Timeout bounds one batch request. Default 5s.
	Timeout time.Duration
	// Clock times the tasks' TTL. Default: the system clock.
	Clock Clock
}

func (c PeerConfig) withDefaults() PeerConfig {
	if c.BatchSize <= 0 {
		c.BatchSize = 250
	}
	if c.MaxQueue <= 0 {
		c.MaxQueue = 10000
	}
	setDuration(&c.MaxBatchDelay, 500*time.Millisecond)
	setDuration(&c.TaskTTL, 30*time.Second)
	setDuration(&c.CongestionRetry, time.Second)
	setDuration(&c.NetworkRetry, 100*time.Millisecond)
	setDuration(&c.Timeout, 5*time.Second)
	if c.Clock == nil {
		c.Clock = systemClock{}
	}
	return c
}

// PeerStats is one peer's replication state.
type PeerStats struct {
	URL         string    `json:"url"`
	QueueLength int       `json:"queue_length"`
	BatchesSent uint64    `json:"batches_sent"`
	Failures    uint64    `json:"failures"`
	Dropped     uint64    `json:"dropped"`
	LastSuccess time.Time `json:"last_success"`
	LastError   string    `json:"last_error,omitempty"`
	// Down is true from a failed batch until the next delivered one.
	Down bool `json:"down"`
}

// Peers replicates a Store's client writes to the other nodes: a queue per
// peer, deduplicated by task ("register#ORDERS/h1"), sent in batches to
// POST {peer}peerreplication/batch/. It is the Store's Replicator.
type Peers struct {
	store  *Store
	cfg    PeerConfig
	peers  []*peer
	client *fasthttp.Client
	log    *zap.Logger

	stop chan struct{}
	wg   sync.WaitGroup
	once sync.Once
}

// NewPeers sets up replication from store to cfg.Peers (minus this node)
// and makes itself store's Replicator. Call SyncFrom, then Start.
func NewPeers(store *Store, cfg PeerConfig) (*Peers, error) {
	cfg = cfg.withDefaults()
	p := &Peers{
		store: store, cfg: cfg, log: store.log, stop: make(chan struct{}),
		client: &fasthttp.Client{Name: "eurekagate-replication", ReadTimeout: cfg.Timeout, WriteTimeout: cfg.Timeout},
	}
	self, _ := eureka.ParseServiceURL(cfg.Self)
	seen := map[string]bool{}
	for _, raw := range cfg.Peers {
		u, err := eureka.ParseServiceURL(raw)
		if err != nil {
			return nil, err
		}
		if u.Base == self.Base || isSelfAddr(u.Host, cfg.SelfAddrs) || seen[u.Base] {
			continue
		}
		seen[u.Base] = true
		p.peers = append(p.peers, &peer{url: u, tasks: map[string]*task{}, wake: make(chan struct{}, 1)})
	}
	store.SetReplicator(p)
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

// Replicate queues it for every peer. It never blocks.
func (p *Peers) Replicate(it ReplicationItem) {
	now := p.cfg.Clock.Now()
	for _, pe := range p.peers {
		pe.enqueue(it, now, p.cfg)
	}
}

// Start runs one sender per peer until Stop.
func (p *Peers) Start() {
	for _, pe := range p.peers {
		p.wg.Add(1)
		go p.send(pe)
	}
}

// Stop stops the senders and waits for them. Queued tasks are dropped.
func (p *Peers) Stop() {
	p.once.Do(func() { close(p.stop) })
	p.wg.Wait()
	p.client.CloseIdleConnections()
}

// Stats returns each peer's replication state.
func (p *Peers) Stats() []PeerStats {
	out := make([]PeerStats, 0, len(p.peers))
	for _, pe := range p.peers {
		out = append(out, pe.stats())
	}
	return out
}

// task is one queued write for one peer.
type task struct {
	key     string
	item    ReplicationItem
	expires time.Time
}

// taskKey is Eureka's dedupe key: "<type>#<APP>/<id>".
func taskKey(it ReplicationItem) string {
	kind := "register"
	switch it.Action {
	case ActionHeartbeat:
		kind = "heartbeat"
	case ActionCancel:
		kind = "cancel"
	case ActionStatusUpdate:
		kind = "statusUpdate"
	case ActionDeleteStatusOverride:
		kind = "deleteStatusOverride"
	}
	return kind + "#" + strings.ToUpper(it.AppName) + "/" + it.ID
}

// peer is one node's queue and its counters.
type peer struct {
	url eureka.ServiceURL

	mu    sync.Mutex
	order []string // keys, oldest first; may hold keys already taken
	tasks map[string]*task
	wake  chan struct{}

	sent, failures, dropped atomic.Uint64
	lastSuccess             atomic.Int64 // unix nanos
	lastError               atomic.Value // string
	down                    atomic.Bool
}

// enqueue adds or replaces a task; a full queue drops its oldest.
func (pe *peer) enqueue(it ReplicationItem, now time.Time, cfg PeerConfig) {
	key := taskKey(it)
	pe.mu.Lock()
	if t := pe.tasks[key]; t != nil {
		t.item, t.expires = it, now.Add(cfg.TaskTTL)
	} else {
		pe.tasks[key] = &task{key: key, item: it, expires: now.Add(cfg.TaskTTL)}
		pe.order = append(pe.order, key)
		for len(pe.tasks) > cfg.MaxQueue {
			pe.popOldestLocked()
			pe.dropped.Add(1)
		}
	}
	pe.mu.Unlock()
	select {
	case pe.wake <- struct{}{}:
	default:
	}
}

// popOldestLocked removes and returns the oldest task. The caller holds
// pe.mu.
func (pe *peer) popOldestLocked() *task {
	for len(pe.order) > 0 {
		key := pe.order[0]
		pe.order = pe.order[1:]
		if t := pe.tasks[key]; t != nil {
			delete(pe.tasks, key)
			return t
		}
	}
	return nil
}

// requeue puts the tasks of a failed batch back in front, unless a newer
// task for the same key arrived meanwhile.
func (pe *peer) requeue(batch []*task) {
	pe.mu.Lock()
	defer pe.mu.Unlock()
	front := make([]string, 0, len(batch))
	for _, t := range batch {
		if pe.tasks[t.key] == nil {
			pe.tasks[t.key] = t
			front = append(front, t.key)
		}
	}
	pe.order = append(front, pe.order...)
}

func (pe *peer) length() int {
	pe.mu.Lock()
	defer pe.mu.Unlock()
	return len(pe.tasks)
}

func (pe *peer) stats() PeerStats {
	s := PeerStats{URL: pe.url.Base, QueueLength: pe.length(), BatchesSent: pe.sent.Load(), Failures: pe.failures.Load(),
		Dropped: pe.dropped.Load(), Down: pe.down.Load()}
	if ns := pe.lastSuccess.Load(); ns > 0 {
		s.LastSuccess = time.Unix(0, ns)
	}
	s.LastError, _ = pe.lastError.Load().(string)
	return s
}

// take removes up to max tasks, oldest first, dropping expired ones.
func (pe *peer) take(max int, now time.Time) (batch []*task, expired int) {
	pe.mu.Lock()
	defer pe.mu.Unlock()
	for len(batch) < max {
		t := pe.popOldestLocked()
		if t == nil {
			break
		}
		if now.After(t.expires) {
			expired++
			continue
		}
		batch = append(batch, t)
	}
	// Compact the order slice when it is mostly consumed keys.
	if cap(pe.order) > 4*len(pe.order)+1024 {
		pe.order = append([]string(nil), pe.order...)
	}
	return batch, expired
}

// send is a peer's sender: it waits for tasks, lets a batch fill for up to
// MaxBatchDelay (or until it is full), sends it, and handles the outcome.
func (p *Peers) send(pe *peer) {
	defer p.wg.Done()
	for {
		if pe.length() == 0 {
			select {
			case <-p.stop:
				return
			case <-pe.wake:
				continue
			}
		}
		if pe.length() < p.cfg.BatchSize {
			timer := time.NewTimer(p.cfg.MaxBatchDelay)
			select {
			case <-p.stop:
				timer.Stop()
				return
			case <-timer.C:
			}
		}
		batch, expired := pe.take(p.cfg.BatchSize, p.cfg.Clock.Now())
		if expired > 0 {
			pe.dropped.Add(uint64(expired))
		}
		if len(batch) == 0 {
			continue
		}
		if wait := p.deliver(pe, batch); wait > 0 {
			pe.requeue(batch)
			timer := time.NewTimer(wait)
			select {
			case <-p.stop:
				timer.Stop()
				return
			case <-timer.C:
			}
		}
	}
}

// deliver sends one batch and returns how long to wait before resending it
// (0: done, delivered or dropped).
func (p *Peers) deliver(pe *peer, batch []*task) time.Duration {
	items := make([]ReplicationItem, len(batch))
	for n, t := range batch {
		items[n] = t.item
	}
	req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)
	req.Header.SetMethod(http.MethodPost)
	req.SetRequestURI(pe.url.Base + "peerreplication/batch/")
	req.Header.SetContentType("application/json")
	req.Header.Set("Accept", "application/json")
	if pe.url.Authorization != "" {
		req.Header.Set("Authorization", pe.url.Authorization)
	}
	req.SetBody(AppendReplicationBatch(nil, items))
	err := p.client.DoTimeout(req, resp, p.cfg.Timeout)
	switch {
	case err != nil:
		p.failed(pe, err.Error())
		var ne net.Error
		if errors.Is(err, fasthttp.ErrTimeout) || (errors.As(err, &ne) && ne.Timeout()) {
			return p.cfg.CongestionRetry
		}
		return p.cfg.NetworkRetry
	case resp.StatusCode() == http.StatusServiceUnavailable:
		p.failed(pe, "503 Service Unavailable")
		return p.cfg.CongestionRetry
	case resp.StatusCode()/100 != 2:
		p.failed(pe, "batch refused with status "+http.StatusText(resp.StatusCode()))
		pe.dropped.Add(uint64(len(batch)))
		return 0 // a permanent error: drop the batch
	}
	pe.sent.Add(1)
	pe.lastSuccess.Store(time.Now().UnixNano())
	if pe.down.Swap(false) {
		p.log.Info("peer is back", zap.String("peer", pe.url.Base))
	}
	body, _ := resp.BodyUncompressed()
	results, err := DecodeReplicationResults(body)
	if err != nil || len(results) != len(items) {
		return 0 // Eureka skips the per-item analysis too
	}
	for n, r := range results {
		p.itemResult(pe, items[n], r)
	}
	return 0
}

// failed counts a failed batch and logs the first of a run.
func (p *Peers) failed(pe *peer, msg string) {
	pe.failures.Add(1)
	pe.lastError.Store(msg)
	if !pe.down.Swap(true) {
		p.log.Warn("peer is down; replication queued", zap.String("peer", pe.url.Base), zap.String("error", msg))
	}
}

// itemResult repairs what a peer reported: a heartbeat it did not know
// gets a registration, and a newer copy it holds (409) is adopted here.
func (p *Peers) itemResult(pe *peer, it ReplicationItem, r ReplicationResult) {
	if it.Action != ActionHeartbeat {
		return
	}
	switch {
	case r.StatusCode == http.StatusNotFound:
		if inst, ok := p.store.Get(strings.ToUpper(it.AppName), it.ID); ok {
			pe.enqueue(ReplicationItem{Action: ActionRegister, AppName: inst.App, ID: inst.ID(),
				LastDirtyTimestamp: inst.LastDirtyTimestamp, Status: inst.Status.String(), Instance: inst}, p.cfg.Clock.Now(), p.cfg)
		}
	case r.Instance != nil:
		if err := p.store.Adopt(r.Instance); err != nil {
			p.log.Warn("adopting a peer's newer instance failed", zap.String("peer", pe.url.Base), zap.Error(err))
		}
	}
}

// SyncFrom fills the Store from the first peer that answers a full fetch,
// registering every instance as a replication (so nothing is sent back),
// and sets the expected number of renewing clients from the count, as
// Eureka's syncUp and openForTraffic do. Run it before serving reads. With
// no peer answering, the node starts empty and logs it. It gives up when
// ctx ends, so it fits in a start-up deadline.
func (p *Peers) SyncFrom(ctx context.Context) int {
	for _, pe := range p.peers {
		timeout := p.cfg.Timeout
		if deadline, ok := ctx.Deadline(); ok {
			timeout = min(timeout, time.Until(deadline)/2)
		}
		if ctx.Err() != nil || timeout <= 0 {
			break
		}
		apps, err := p.fetchAll(pe, timeout)
		if err != nil {
			p.log.Warn("start-up sync: peer did not answer", zap.String("peer", pe.url.Base), zap.Error(err))
			continue
		}
		count := 0
		for _, a := range apps.Applications {
			for _, i := range a.Instances {
				if i.App == "" {
					i.App = a.Name
				}
				if err := p.store.Adopt(i); err == nil {
					count++
				}
			}
		}
		p.store.SetExpectedRenewingClients(max(count, 1))
		p.log.Info("start-up sync done", zap.String("peer", pe.url.Base), zap.Int("instances", count))
		return count
	}
	if len(p.peers) > 0 {
		p.log.Warn("start-up sync: no peer answered; starting with an empty registry", zap.Int("peers", len(p.peers)))
	}
	return 0
}

func (p *Peers) fetchAll(pe *peer, timeout time.Duration) (*eureka.Applications, error) {
	req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)
	req.SetRequestURI(pe.url.Base + "apps/")
	req.Header.Set("Accept", "application/json")
	req.Header.Set("Accept-Encoding", "gzip")
	if pe.url.Authorization != "" {
		req.Header.Set("Authorization", pe.url.Authorization)
	}
	if err := p.client.DoTimeout(req, resp, timeout); err != nil {
		return nil, err
	}
	if resp.StatusCode() != http.StatusOK {
		return nil, errors.New("full fetch answered " + http.StatusText(resp.StatusCode()))
	}
	body, err := resp.BodyUncompressed()
	if err != nil {
		return nil, err
	}
	return eureka.DecodeApplicationsJSON(body)
}
