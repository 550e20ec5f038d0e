package replication

import (
	"crypto/tls"
	"time"

	"go.uber.org/zap"

	"github.com/eurekagate/eurekagate/registry"
)

// Config configures replication to the other nodes of a registry
// cluster, with Eureka's own peer protocol, so nodes can also join a
// cluster of Java Eureka servers.
type Config struct {
	// Peers are the service URLs of the other nodes, such as
	// http://eureka-2:8761/eureka/. User info in a URL is sent as basic
	// auth. This node's own URL may be listed: it is recognised and skipped.
	Peers []string
	// PeersDNS are DNS names whose records are peers, looked up at the
	// start-up sync, every ResolveInterval and when a connection to a
	// peer fails: http://NAME:PORT/eureka/ (or https://) makes each A and
	// AAAA record of NAME (a Kubernetes headless Service, say) a peer at
	// that port, scheme and path; srv://NAME/eureka/ (srv+https:// for
	// https) makes each SRV record a peer at its target and port, the
	// target connected to by name. This node is among the records and is
	// recognised by its identity. A name whose look-up fails keeps its
	// last answer; one that does not exist gives no peer. Default: none.
	PeersDNS []string
	// DNSResolver is the DNS server (host:port) PeersDNS are looked up
	// at. Default: the system's resolver.
	DNSResolver string
	// ResolveInterval is how often PeersDNS are looked up again. Default
	// 30s (Java's peer-eureka-nodes-update-interval-ms is 10 min; a
	// Kubernetes pod moves in seconds).
	ResolveInterval time.Duration
	// Self is this node's own service URL, to recognise it among Peers.
	// Entries whose host:port is one of SelfAddrs are skipped too.
	Self      string
	SelfAddrs []string
	// BatchSize is the most tasks in one batch. Default 250.
	BatchSize int
	// MaxBatchDelay is how long a task waits for others to join its batch
	// when the peer's queue holds fewer than BatchSize. Default 0: a task
	// is sent at once (a heartbeat waits up to HeartbeatBatchDelay), and
	// the tasks that queue while a batch is in flight go together in the
	// next one, so a write reaches an idle peer in one round trip.
	MaxBatchDelay time.Duration
	// HeartbeatBatchDelay is how long heartbeats wait for others to join
	// their batch when MaxBatchDelay is 0: a queue of heartbeats alone is
	// sent once it is this old or BatchSize long, and any other write
	// sends it at once. Default 100ms (Eureka batches every write for up
	// to 500ms); negative: heartbeats go at once too.
	HeartbeatBatchDelay time.Duration
	// MaxQueue bounds each peer's queue; on overflow the oldest task is
	// dropped (the instance's next heartbeat, answered 404, repairs it).
	// Default 100000, ten times Eureka's: room for a mass registration
	// of a million instances to a peer that falls behind (see "A cluster
	// at a million instances" in docs/performance.md); a task is some
	// 200 bytes, so the bound holds 20 MB.
	MaxQueue int
	// MaxBatchBytes bounds a batch's body: a larger batch is split in
	// halves before it is sent, as after a 413, and a single task larger
	// than this is dropped unsent, as one the peer refuses. A peer answers
	// a batch over its limit before reading it, so a batch larger than
	// the connection's buffers gets a reset, not that 413, and would be
	// sent again whole until its tasks expired. Default
	// DefaultMaxBatchBytes, the REST API's own limit
	// (httpapi.APIConfig.MaxBatchBytes); keep it no higher than the
	// peers'.
	MaxBatchBytes int64
	// TaskTTL is how long a task may wait before it is dropped as stale.
	// Default 30s (Eureka's renewal interval and maxTimeForReplication).
	TaskTTL time.Duration
	// CancelTTL is how long a cancel may wait: as long as the Store
	// remembers cancels, so a peer that comes back within it still hears
	// of them. Default: the Store's DeltaRetention (3m by default).
	CancelTTL time.Duration
	// CongestionRetry is the wait before resending a batch that got 503 or
	// timed out. Default 1s. NetworkRetry is the wait after other network
	// errors. Default 100ms.
	CongestionRetry, NetworkRetry time.Duration
	// Timeout bounds one batch request, and each wait of the start-up
	// sync for a peer's answer and its next bytes: a registry is read for
	// as long as it keeps coming. Default 5s.
	Timeout time.Duration
	// StartupSyncTimeout bounds the start-up sync's passes over the peers:
	// after it, a node that got only errors keeps reads refused until
	// StartupSyncEmptyWait. Default 2m (Eureka's five passes 30 s apart).
	StartupSyncTimeout time.Duration
	// StartupSyncRetryWait is the wait before the start-up sync asks the
	// peers again after an error; it doubles each pass, up to 30 s
	// (Eureka's registrySyncRetryWaitMs). Default 1s.
	StartupSyncRetryWait time.Duration
	// StartupSyncEmptyWait is how long after the start reads stay refused
	// when the start-up sync got no registry but errors: Eureka's
	// waitTimeInMsWhenSyncEmpty. Default 5m.
	StartupSyncEmptyWait time.Duration
	// MaxResponseBytes bounds a peer's answer, as received and
	// gzip-decoded: the start-up sync's full registry and a batch's
	// results. A larger answer is an error naming MaxResponseBytesSetting,
	// so a hostile peer cannot exhaust memory with a gzip bomb. Default
	// eurekahttp.DefaultMaxBodySize (1 GiB, a million instances).
	MaxResponseBytes int
	// MaxResponseBytesSetting names MaxResponseBytes as the host's user
	// sets it (a flag, a Caddy option), for the error of an answer over
	// it. Default "MaxResponseBytes".
	MaxResponseBytesSetting string
	// TLS configures the connections to https:// peer URLs: the CAs this
	// node trusts and the client certificate it presents to peers that
	// require one (internal/tlsfiles makes one from PEM files, reloaded
	// when they change). Default: nil, the system's roots and no client
	// certificate.
	TLS *tls.Config
	// Clock times the tasks' TTL. Default: the system clock.
	Clock registry.Clock
	// Logger receives a line when a peer goes down or comes back and what
	// the start-up sync decided. Default: the Store's logger.
	Logger *zap.Logger
}

// Defaults of Config's batches, queue, start-up sync and DNS look-ups.
const (
	DefaultMaxBatchBytes        = 16 << 20 // 250 registrations of 64 KiB each
	DefaultMaxQueue             = 100_000
	DefaultHeartbeatBatchDelay  = 100 * time.Millisecond
	DefaultStartupSyncTimeout   = 2 * time.Minute
	DefaultStartupSyncRetryWait = time.Second
	DefaultStartupSyncEmptyWait = 5 * time.Minute
	DefaultResolveInterval      = 30 * time.Second
)

func (c Config) withDefaults() Config {
	if c.BatchSize <= 0 {
		c.BatchSize = 250
	}
	if c.MaxQueue <= 0 {
		c.MaxQueue = DefaultMaxQueue
	}
	if c.MaxBatchBytes <= 0 {
		c.MaxBatchBytes = DefaultMaxBatchBytes
	}
	c.MaxBatchDelay = max(c.MaxBatchDelay, 0)
	if c.HeartbeatBatchDelay == 0 {
		c.HeartbeatBatchDelay = DefaultHeartbeatBatchDelay
	}
	setDuration(&c.TaskTTL, 30*time.Second)
	setDuration(&c.CancelTTL, 3*time.Minute)
	setDuration(&c.CongestionRetry, time.Second)
	setDuration(&c.NetworkRetry, 100*time.Millisecond)
	setDuration(&c.Timeout, 5*time.Second)
	setDuration(&c.StartupSyncTimeout, DefaultStartupSyncTimeout)
	setDuration(&c.StartupSyncRetryWait, DefaultStartupSyncRetryWait)
	setDuration(&c.StartupSyncEmptyWait, DefaultStartupSyncEmptyWait)
	setDuration(&c.ResolveInterval, DefaultResolveInterval)
	if c.MaxResponseBytesSetting == "" {
		c.MaxResponseBytesSetting = "MaxResponseBytes"
	}
	if c.Clock == nil {
		c.Clock = systemClock{}
	}
	return c
}

type systemClock struct{}

func (systemClock) Now() time.Time { return time.Now() }

func setDuration(d *time.Duration, def time.Duration) {
	if *d <= 0 {
		*d = def
	}
}
