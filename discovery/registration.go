package discovery

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"time"

	"go.uber.org/zap"
	"golang.org/x/time/rate"

	"github.com/eurekagate/eurekagate/eureka"
	"github.com/eurekagate/eurekagate/internal/eurekahttp"
)

// registration is the lifecycle of the registered instance: register at
// once, heartbeat every LeaseRenewalInterval, re-register on 404 and after
// local changes, cancel on stop.
type registration struct {
	c       *Client
	limiter *rate.Limiter
	kick    chan struct{} // on-demand re-registration

	mu         sync.Mutex
	cfg        InstanceConfig // status and metadata change under mu
	lastDirty  int64
	dirty      bool // local data changed and not yet registered
	registered bool
	// announced is true once "instance registered" was logged for the
	// registration the registry holds: the updates after it (a status,
	// metadata) are not new registrations, as the registry's log says
	// too; a 404 on a heartbeat (the registry lost it) clears it.
	announced bool
	cancelled bool // Stop cancelled the registration: register no more

	// onKick, for tests, hears each on-demand change the loop has handled:
	// registered (true) or left to the next heartbeat (false).
	onKick func(registered bool)
}

// errCancelled is a registration attempted after Stop cancelled it.
var errCancelled = errors.New("discovery: registration cancelled by Stop")

func newRegistration(c *Client, cfg *InstanceConfig) *registration {
	return &registration{
		c: c, limiter: newLimiter(), kick: make(chan struct{}, 1),
		cfg: *cfg, lastDirty: c.cfg.clock.Now().UnixMilli(), dirty: true,
	}
}

// loop registers at once, then heartbeats every LeaseRenewalInterval from
// the start of the previous one. Only a heartbeat that timed out delays
// the next (doubling, up to ExpBackOffBound intervals, as Java's
// TimedSupervisorTask); any other failure keeps the interval, so that one
// failed heartbeat never comes near the end of the lease. On-demand
// re-registrations (SetStatus, SetMetadata) run between heartbeats and
// leave their schedule alone.
func (r *registration) loop() {
	defer r.c.wg.Done()
	clk := r.c.cfg.clock
	interval := r.cfg.LeaseRenewalInterval
	var delay, wait time.Duration
	for {
		if !r.wait(wait) {
			return
		}
		start := clk.Now()
		err := r.tick()
		if err != nil && r.c.ctx.Err() == nil {
			r.c.cfg.Logger.Warn("registration: request failed", zap.Error(err), zap.Bool("timeout", eurekahttp.IsTimeout(err)))
		}
		delay = r.c.backoff(delay, interval, err)
		wait = max(0, delay-clk.Now().Sub(start))
	}
}

// wait waits d for the next heartbeat, registering on-demand changes in
// the meantime without moving the heartbeat. It reports false at Stop.
func (r *registration) wait(d time.Duration) bool {
	clk := r.c.cfg.clock
	timer, stop := clk.NewTimer(d)
	defer stop()
	for {
		select {
		case <-r.c.stop:
			return false
		case <-timer:
			return true
		case <-r.kick:
			// Over the on-demand limit, the next heartbeat registers the
			// change instead.
			if !r.limiter.AllowN(clk.Now(), 1) {
				r.kickDone(false)
				continue
			}
			if err := r.register(); err != nil && r.c.ctx.Err() == nil {
				r.c.cfg.Logger.Warn("registration: on-demand update failed; the next heartbeat registers it", zap.Error(err))
			}
			r.kickDone(true)
		}
	}
}

func (r *registration) kickDone(registered bool) {
	if r.onKick != nil {
		r.onKick(registered)
	}
}

// tick registers if local data changed, and heartbeats otherwise.
func (r *registration) tick() error {
	r.mu.Lock()
	dirty := r.dirty
	r.mu.Unlock()
	if dirty {
		return r.register()
	}
	return r.heartbeat()
}

// register POSTs the instance; Eureka answers 204.
func (r *registration) register() error {
	r.mu.Lock()
	if r.cancelled {
		r.mu.Unlock()
		return errCancelled
	}
	inst := r.cfg.instance(r.lastDirty)
	dirtyAt := r.lastDirty
	r.mu.Unlock()
	resp, err := r.c.servers.Do(r.c.ctx, eurekahttp.Request{Method: http.MethodPost,
		Path: "apps/" + url.PathEscape(inst.App), Body: eureka.AppendInstanceJSON(nil, inst),
		FailOver: eurekahttp.FailOverRegistration})
	if err != nil {
		return err
	}
	if resp.Status != http.StatusNoContent {
		return &statusError{"register", resp.Status}
	}
	r.mu.Lock()
	if r.lastDirty == dirtyAt {
		r.dirty = false
	}
	r.registered = true
	announced := r.announced
	r.announced = true
	cancelled, path := r.cancelled, r.instancePath()
	r.mu.Unlock()
	if cancelled {
		// Stop sent its DELETE while this registration was on its way,
		// and it may have arrived second: cancel again.
		return r.sendCancel(path)
	}
	msg, level := "instance registered", zap.InfoLevel
	if announced {
		msg, level = "registration updated", zap.DebugLevel
	}
	if ce := r.c.cfg.Logger.Check(level, msg); ce != nil {
		ce.Write(zap.String("app", inst.App), zap.String("id", inst.InstanceID), zap.Stringer("status", inst.Status))
	}
	return nil
}

// heartbeat renews the lease. A 404 means the server lost or distrusts the
// registration: mark the data dirty and register again.
func (r *registration) heartbeat() error {
	r.mu.Lock()
	path := r.instancePath() + "?status=" + r.cfg.Status.String() + "&lastDirtyTimestamp=" + strconv.FormatInt(r.lastDirty, 10)
	r.mu.Unlock()
	resp, err := r.c.servers.Do(r.c.ctx, eurekahttp.Request{Method: http.MethodPut, Path: path,
		FailOver: eurekahttp.FailOverRegistration})
	if err != nil {
		return err
	}
	switch resp.Status {
	case http.StatusOK:
		return nil
	case http.StatusNotFound:
		r.c.cfg.Logger.Info("heartbeat answered 404; registering again")
		r.mu.Lock()
		r.lastDirty = max(r.c.cfg.clock.Now().UnixMilli(), r.lastDirty+1)
		r.dirty = true
		r.announced = false
		r.mu.Unlock()
		return r.register()
	}
	return &statusError{"heartbeat", resp.Status}
}

// cancel ends the registration for good: no registration is sent after it,
// and a registered instance is cancelled (DELETE).
func (r *registration) cancel() error {
	r.mu.Lock()
	r.cancelled = true
	registered, path := r.registered, r.instancePath()
	r.mu.Unlock()
	if !registered {
		return nil
	}
	return r.sendCancel(path)
}

// sendCancel DELETEs the instance, bounded by ReadTimeout of its own: Stop
// sends it even when its context has ended. Any answer will do, as for the
// Java client: only a connection error or a timeout tries the next server.
func (r *registration) sendCancel(path string) error {
	ctx, cancel := context.WithTimeout(context.Background(), r.c.cfg.ReadTimeout)
	defer cancel()
	resp, err := r.c.servers.Do(ctx, eurekahttp.Request{Method: http.MethodDelete, Path: path,
		FailOver: eurekahttp.FailOverNever})
	if err != nil {
		return err
	}
	r.c.cfg.Logger.Info("instance cancelled", zap.String("path", path), zap.Int("status", resp.Status))
	return nil
}

// instancePath is apps/{APP}/{id}. The caller holds r.mu.
func (r *registration) instancePath() string {
	inst := r.cfg.instance(r.lastDirty)
	return "apps/" + url.PathEscape(inst.App) + "/" + url.PathEscape(inst.InstanceID)
}

// changed marks local data dirty and asks the loop to re-register.
func (r *registration) changed(edit func(*InstanceConfig)) {
	r.mu.Lock()
	edit(&r.cfg)
	r.lastDirty = max(r.c.cfg.clock.Now().UnixMilli(), r.lastDirty+1)
	r.dirty = true
	r.mu.Unlock()
	select {
	case r.kick <- struct{}{}:
	default:
	}
}

// ErrNotRegistering is returned by the methods that change the registered
// instance when the Client has no Instance to register.
var ErrNotRegistering = errors.New("discovery: no instance configured")

// SetStatus changes the registered instance's status and re-registers it,
// as the Java client's status-change listener does: at once, at most twice
// in a burst and four times a minute; later changes go with the next
// heartbeat. Neither moves the heartbeats, which keep their schedule.
//
// As with the Java client, Eureka's override rules keep a registered UP
// instance UP when it re-registers as OUT_OF_SERVICE: report DOWN to stop
// traffic, or set OUT_OF_SERVICE as a server-side override
// (PUT apps/{app}/{id}/status).
func (c *Client) SetStatus(st eureka.Status) error {
	if c.reg == nil {
		return ErrNotRegistering
	}
	c.reg.changed(func(ic *InstanceConfig) { ic.Status = st })
	return nil
}

// SetMetadata sets metadata keys of the registered instance and
// re-registers it, with the same limits as SetStatus.
func (c *Client) SetMetadata(md map[string]string) error {
	if c.reg == nil {
		return ErrNotRegistering
	}
	c.reg.changed(func(ic *InstanceConfig) {
		merged := make(map[string]string, len(ic.Metadata)+len(md))
		for k, v := range ic.Metadata {
			merged[k] = v
		}
		for k, v := range md {
			merged[k] = v
		}
		ic.Metadata = merged
	})
	return nil
}

// Instance returns the instance as the client registers it.
func (c *Client) Instance() (*eureka.InstanceInfo, bool) {
	if c.reg == nil {
		return nil, false
	}
	c.reg.mu.Lock()
	defer c.reg.mu.Unlock()
	return c.reg.cfg.instance(c.reg.lastDirty), true
}
