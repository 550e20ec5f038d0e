// Package redisrate is the gateways' shared rate limits: GCRA per key in
// Redis (a Lua script, script.go), served to requests from leases each
// gateway takes of it (lease.go), so that no request waits on Redis; a
// Store holds the client, the workers that refill the leases in batches
// (one pipeline of EVALSHA for the keys waiting), and Redis's state,
// reachable or not.
package redisrate

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
	"go.uber.org/zap"

	"github.com/eurekagate/eurekagate/internal/tick"
)

// DefaultProbeInterval is how often an unreachable Redis is tried again.
const DefaultProbeInterval = 500 * time.Millisecond

// workers is the number of goroutines that refill leases; batch the most
// refills one sends in a pipeline; queued the most refills waiting.
const (
	workers = 2
	batch   = 256
	queued  = 4096
)

// Config configures a Store.
type Config struct {
	// URL is Redis's address, as go-redis's ParseURL reads it:
	// redis://[[user]:password@]host:port[/db], rediss:// for TLS.
	// Required.
	URL string
	// Logger tells once when Redis becomes unreachable and once when it
	// is reachable again; never the URL, which may hold a password.
	// Default: none.
	Logger *zap.Logger
	// Now is the clock of the leases, in nanoseconds (monotonic): the one
	// Limit.Allow is given. Required.
	Now func() int64
	// ProbeInterval is how often an unreachable Redis is tried again.
	// Default DefaultProbeInterval (500ms).
	ProbeInterval time.Duration
}

// A Store is the client of the shared limits' Redis and its workers:
// made by New, which starts them; Close stops them, waits for them and
// closes the client.
type Store struct {
	cfg    Config
	client *redis.Client
	log    *zap.Logger
	asks   chan refill
	up     atomic.Bool
	errs   atomic.Uint64
	stop   chan struct{}
	wg     sync.WaitGroup
	once   sync.Once

	mu      sync.Mutex
	lastErr string
	since   time.Time // when Redis was last found unreachable or reachable again
}

// A refill is a key's lease asked for: want requests.
type refill struct {
	l    *Limit
	e    *entry
	want int64
}

// New parses cfg.URL and starts the Store's workers; Redis is not
// dialled before the first refill, and is taken as reachable until a
// refill fails.
func New(cfg Config) (*Store, error) {
	opt, err := redis.ParseURL(cfg.URL)
	if err != nil {
		return nil, errors.New("redis URL: " + redact(err.Error(), cfg.URL))
	}
	if cfg.Now == nil {
		return nil, errors.New("redisrate: Config.Now is required")
	}
	if cfg.ProbeInterval <= 0 {
		cfg.ProbeInterval = DefaultProbeInterval
	}
	// go-redis logs each failed dial on its own global logger: the
	// Store logs an outage once, and Redis's clients in this process
	// (Caddy's modules among them) are its.
	quietOnce.Do(func() { redis.SetLogger(quiet{}) })
	s := newStore(cfg)
	s.client = redis.NewClient(opt)
	s.wg.Add(workers + 1)
	for range workers {
		go s.work()
	}
	go s.probe()
	return s, nil
}

var quietOnce sync.Once

// quiet is go-redis's logger: nothing.
type quiet struct{}

func (quiet) Printf(context.Context, string, ...any) {}

// newStore is a Store without a client or goroutines, for the tests of
// the leases, which answer its asks themselves.
func newStore(cfg Config) *Store {
	s := &Store{cfg: cfg, log: cfg.Logger, asks: make(chan refill, queued), stop: make(chan struct{}), since: time.Now()}
	if s.log == nil {
		s.log = zap.NewNop()
	}
	s.up.Store(true)
	return s
}

// Close stops the workers, waits for them and closes the client.
func (s *Store) Close() error {
	var err error
	s.once.Do(func() {
		close(s.stop)
		s.wg.Wait()
		if s.client != nil {
			err = s.client.Close()
		}
	})
	return err
}

// Up reports whether Redis is taken as reachable: the last refill or
// probe answered.
func (s *Store) Up() bool { return s.up.Load() }

// Errors returns how many calls to Redis failed.
func (s *Store) Errors() uint64 { return s.errs.Load() }

// State returns the last failure ("" while Redis is reachable) and when
// Redis was last found unreachable or reachable again.
func (s *Store) State() (lastErr string, since time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lastErr, s.since
}

// ask queues a refill; false when the queue is full (the key asks again
// at its next request).
func (s *Store) ask(r refill) bool {
	select {
	case s.asks <- r:
		return true
	default:
		return false
	}
}

// work refills leases: the refills waiting, up to a batch, in one
// pipeline.
func (s *Store) work() {
	defer s.wg.Done()
	rs := make([]refill, 0, batch)
	for {
		select {
		case <-s.stop:
			return
		case r := <-s.asks:
			rs = append(rs[:0], r)
		}
	more:
		for len(rs) < batch {
			select {
			case r := <-s.asks:
				rs = append(rs, r)
			default:
				break more
			}
		}
		s.send(rs)
	}
}

// send runs the script for each refill in one pipeline and hands each
// its answer; a script Redis does not hold (a restart) is loaded and the
// batch sent again.
func (s *Store) send(rs []refill) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	cmds, err := s.pipeline(ctx, rs)
	if err != nil && redis.HasErrorPrefix(err, "NOSCRIPT") {
		if err = gcra.Load(ctx, s.client).Err(); err == nil {
			cmds, err = s.pipeline(ctx, rs)
		}
	}
	now := s.cfg.Now()
	if err != nil {
		s.failed(err)
		for _, r := range rs {
			r.l.apply(r, 0, 0, true, now)
		}
		return
	}
	s.reachable()
	for i, r := range rs {
		v, _ := cmds[i].Int64Slice()
		if len(v) != 2 {
			r.l.apply(r, 0, 0, true, now)
			continue
		}
		r.l.apply(r, v[0], v[1]*int64(time.Microsecond), false, now)
	}
}

// pipeline sends one EVALSHA a refill.
func (s *Store) pipeline(ctx context.Context, rs []refill) ([]*redis.Cmd, error) {
	pipe := s.client.Pipeline()
	cmds := make([]*redis.Cmd, len(rs))
	for i, r := range rs {
		l := r.l
		cmds[i] = gcra.EvalSha(ctx, pipe, []string{keyName(l.prefix, r.e.key)},
			float64(l.interval)/1e3, float64(l.interval)*float64(l.burst)/1e3, r.want)
	}
	_, err := pipe.Exec(ctx)
	return cmds, err
}

// keyName is a key's name in Redis: the limit's prefix and the key's
// hash in hexadecimal.
func keyName(prefix string, key uint64) string {
	const hex = "0123456789abcdef"
	b := make([]byte, len(prefix), len(prefix)+16)
	copy(b, prefix)
	for i := 60; i >= 0; i -= 4 {
		b = append(b, hex[key>>uint(i)&15])
	}
	return string(b)
}

// probe tries an unreachable Redis again every ProbeInterval.
func (s *Store) probe() {
	defer s.wg.Done()
	tick.Every(s.cfg.ProbeInterval, s.stop, nil, func() {
		if s.Up() {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), s.cfg.ProbeInterval)
		err := gcra.Load(ctx, s.client).Err()
		cancel()
		if err != nil {
			s.failed(err)
		} else {
			s.reachable()
		}
	})
}

// failed counts a failure, and logs it when Redis was taken as
// reachable: once per outage.
func (s *Store) failed(err error) {
	s.errs.Add(1)
	msg := redact(err.Error(), s.cfg.URL)
	s.mu.Lock()
	s.lastErr = msg
	if s.up.Swap(false) {
		s.since = time.Now()
		s.log.Warn("shared rate limits: Redis unreachable: limits without a lease left fail open or closed as configured until it answers", zap.String("error", msg))
	}
	s.mu.Unlock()
}

// reachable marks Redis reachable, and logs it when it was not.
func (s *Store) reachable() {
	if s.up.Load() {
		return
	}
	s.mu.Lock()
	if !s.up.Swap(true) {
		s.lastErr = ""
		s.since = time.Now()
		s.log.Info("shared rate limits: Redis reachable again")
	}
	s.mu.Unlock()
}
