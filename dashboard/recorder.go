package dashboard

import (
	"sync"

	"github.com/eurekagate/eurekagate/eureka"
	"github.com/eurekagate/eurekagate/registry"
)

const (
	minuteMS = 60_000
	// historyMinutes is how far back the charts go; the ring holds one more
	// bucket for the current, partial minute.
	historyMinutes = 15
	// feedSize is how many changes the recent-changes feed keeps.
	feedSize = 100
	// sampleEvery is the least time between two samples of the Store's
	// numbers (renews, threshold, self-preservation, status counts) made on
	// reads; a new minute always takes one.
	sampleEvery = 2_000
)

// recorder keeps the last 15 minutes of the registry's activity, per
// wall-clock minute, and the last changes, in memory.
//
// Registrations, cancels, evictions and status changes are counted from the
// Store's change stream, in the minute of each change's timestamp, so they
// are complete whoever looks. The rest is read from the Store when it is
// sampled: renews per minute (the Store's count of the previous full minute,
// RenewsLastMinute, read during the next minute), the self-preservation
// threshold and state, and the instances by status. A sample is taken on
// every change and every dashboard request (at most every two seconds), and
// every few seconds while the Handler is started; a minute in which no
// sample was taken has no value for these (null in the data, a gap in the
// chart).
//
// It owns no goroutine: the Handler's sampler, if started, calls sample.
type recorder struct {
	store *registry.Store

	mu         sync.Mutex
	ring       [historyMinutes + 1]bucket
	markers    []Marker
	spKnown    bool
	spActive   bool
	lastSample int64 // ms of the last full sample, 0 before the first
	feed       [feedSize]Event
	feedLen    int // changes recorded so far (the ring's write position)
}

// bucket is one minute's numbers.
type bucket struct {
	minute                                        int64 // minutes since the epoch; 0: unused
	registered, cancelled, evicted, statusChanges int
	renews                                        int64
	renewsKnown                                   bool
	threshold                                     int
	thresholdKnown                                bool
	sp, spKnown                                   bool
	instances                                     map[string]int // nil: not sampled
}

func newRecorder(store *registry.Store) *recorder {
	return &recorder{store: store}
}

func (r *recorder) now() int64 { return r.store.Config().Clock.Now().UnixMilli() }

// slot returns minute m's bucket, starting it afresh if the ring's slot
// held an older minute, or nil if m is older than the slot's minute (too
// old to keep). The caller holds r.mu.
func (r *recorder) slot(m int64) *bucket {
	b := &r.ring[m%int64(len(r.ring))]
	switch {
	case b.minute == m:
	case b.minute < m:
		*b = bucket{minute: m}
	default:
		return nil
	}
	return b
}

// onChange is the change stream's subscriber: it counts the change in its
// minute and keeps it for the feed. It runs on the writer's goroutine, so
// it only takes r.mu and reads the Store's lock-free counters.
func (r *recorder) onChange(c registry.Change) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if b := r.slot(c.At / minuteMS); b != nil {
		switch c.Kind {
		case registry.Registered, registry.MetadataUpdated:
			b.registered++
		case registry.Cancelled:
			b.cancelled++
		case registry.Evicted:
			b.evicted++
		default:
			b.statusChanges++
		}
	}
	r.feed[r.feedLen%feedSize] = eventOf(&c)
	r.feedLen++
	r.sampleRenewsLocked()
}

// sampleRenewsLocked records the Store's renews of the previous full
// minute. The caller holds r.mu.
func (r *recorder) sampleRenewsLocked() {
	before := r.now() / minuteMS
	n := r.store.Stats().RenewsLastMinute()
	if r.now()/minuteMS != before {
		return // the minute turned while reading: n may be either minute's
	}
	if before*minuteMS <= r.store.Stats().StartedAt().UnixMilli() {
		return // the previous minute ended before the registry started
	}
	if b := r.slot(before - 1); b != nil {
		b.renews, b.renewsKnown = n, true
	}
}

// sample reads the Store's numbers into the current minute, at most every
// sampleEvery unless the minute changed. It notes a self-preservation start
// or end when the state differs from the previous sample's.
func (r *recorder) sample(force bool) {
	now := r.now()
	r.mu.Lock()
	last := r.lastSample
	due := force || last == 0 || now-last >= sampleEvery || now/minuteMS != last/minuteMS
	r.mu.Unlock()
	if !due {
		return
	}
	// Read the Store without holding r.mu: these take the Store's read lock,
	// and onChange runs while writers wait for delivery.
	sp := r.store.Stats().SelfPreservation()
	counts := r.store.Stats().StatusCounts()
	instances := map[string]int{}
	for _, c := range counts {
		for st, n := range c {
			if n > 0 {
				instances[eureka.Status(st).String()] += n
			}
		}
	}

	r.mu.Lock()
	defer r.mu.Unlock()
	if now < r.lastSample {
		return // a later sample got here first
	}
	m := now / minuteMS
	b := r.slot(m)
	if b == nil {
		return
	}
	b.threshold, b.thresholdKnown = sp.Threshold, true
	b.sp, b.spKnown = sp.Active, true
	b.instances = instances
	if r.spKnown && sp.Active != r.spActive {
		// The state is decided per minute (the previous minute's renews
		// against the threshold): a change first seen in a later minute
		// than the previous sample happened when this minute began.
		at := now
		if r.lastSample/minuteMS != m {
			at = m * minuteMS
		}
		kind := "ended"
		if sp.Active {
			kind = "started"
		}
		r.markers = append(r.markers, Marker{At: at, Kind: kind, RenewsLastMinute: sp.RenewsLastMinute, Threshold: sp.Threshold})
	}
	r.spKnown, r.spActive = true, sp.Active
	r.lastSample = now
	r.sampleRenewsLocked()
	// Forget markers older than the charts.
	from := (m - historyMinutes) * minuteMS
	keep := r.markers[:0]
	for _, mk := range r.markers {
		if mk.At >= from {
			keep = append(keep, mk)
		}
	}
	r.markers = keep
}

// Charts is the data behind the charts: the last 15 minutes and the
// current one, oldest first, and the self-preservation starts and ends in
// that time.
type Charts struct {
	// Now is the server's time, in ms since the epoch.
	Now int64 `json:"now"`
	// Started is when the registry started, in ms since the epoch: the
	// minutes before it have no data.
	Started int64 `json:"started"`
	// MinuteMS is a bucket's length: 60000.
	MinuteMS int64 `json:"minute_ms"`
	// Minutes has 16 buckets; the last one is the current minute, so far.
	Minutes []MinuteStats `json:"minutes"`
	// Markers are the self-preservation starts and ends seen in that time.
	Markers []Marker `json:"markers"`
	// SelfPreservation is the state now.
	SelfPreservation registry.SelfPreservation `json:"self_preservation"`
}

// MinuteStats is one minute of activity. Fields that are read from the
// Store rather than counted from the change stream are null for a minute
// in which nothing sampled them.
type MinuteStats struct {
	// Start is the minute's start, in ms since the epoch.
	Start int64 `json:"start"`
	// Registered counts registrations (with re-registrations and metadata
	// updates, as the registrations metric does); Cancelled and Evicted the
	// removals; StatusChanges the other changes (status and override
	// changes).
	Registered    int `json:"registered"`
	Cancelled     int `json:"cancelled"`
	Evicted       int `json:"evicted"`
	StatusChanges int `json:"status_changes"`
	// Renews is the heartbeats renewed in the minute; null for the current
	// minute and for one not followed by a sample in the next minute.
	Renews *int64 `json:"renews"`
	// Threshold is the self-preservation threshold (renews per minute) last
	// sampled in the minute.
	Threshold *int `json:"threshold"`
	// SelfPreservation is whether self-preservation held at the minute's
	// last sample.
	SelfPreservation *bool `json:"self_preservation"`
	// Instances counts the instances by status at the minute's last sample.
	Instances map[string]int `json:"instances"`
}

// Marker is a self-preservation start or end.
type Marker struct {
	// At is when it was seen, in ms since the epoch.
	At int64 `json:"at"`
	// Kind is "started" or "ended".
	Kind string `json:"kind"`
	// RenewsLastMinute and Threshold are the numbers that decided it.
	RenewsLastMinute int64 `json:"renews_last_minute"`
	Threshold        int   `json:"threshold"`
}

// charts samples the Store and returns the series.
func (r *recorder) charts() Charts {
	r.sample(false)
	now := r.now()
	sp := r.store.Stats().SelfPreservation()
	r.mu.Lock()
	defer r.mu.Unlock()
	m := now / minuteMS
	out := Charts{Now: now, Started: r.store.Stats().StartedAt().UnixMilli(), MinuteMS: minuteMS, Minutes: make([]MinuteStats, 0, len(r.ring)), Markers: []Marker{}, SelfPreservation: sp}
	for k := m - historyMinutes; k <= m; k++ {
		s := MinuteStats{Start: k * minuteMS}
		if b := &r.ring[k%int64(len(r.ring))]; b.minute == k {
			s.Registered, s.Cancelled, s.Evicted, s.StatusChanges = b.registered, b.cancelled, b.evicted, b.statusChanges
			if b.renewsKnown {
				s.Renews = &b.renews
			}
			if b.thresholdKnown {
				s.Threshold = &b.threshold
			}
			if b.spKnown {
				s.SelfPreservation = &b.sp
			}
			s.Instances = b.instances
		}
		out.Minutes = append(out.Minutes, s)
	}
	for _, mk := range r.markers {
		if mk.At >= out.Minutes[0].Start {
			out.Markers = append(out.Markers, mk)
		}
	}
	return out
}

// Event is one entry of the recent-changes feed.
type Event struct {
	// Version is the Store version the change produced.
	Version uint64 `json:"version"`
	// At is when it happened, in ms since the epoch.
	At int64 `json:"at"`
	// Kind is the change's kind: registered, cancelled, evicted,
	// status_set, override_deleted, override_adopted, renewed (a heartbeat
	// changed the status) or metadata_updated.
	Kind string `json:"kind"`
	App  string `json:"app"`
	ID   string `json:"id"`
	// Status is the instance's status after the change (its last for a
	// removal).
	Status string `json:"status"`
	// Replicated is true when a peer sent the change.
	Replicated bool `json:"replicated,omitempty"`
}

func eventOf(c *registry.Change) Event {
	return Event{Version: c.Version, At: c.At, Kind: c.Kind.String(), App: c.App, ID: c.ID,
		Status: c.Instance.Status.String(), Replicated: c.Replicated}
}

// recent returns the last changes recorded, oldest first.
func (r *recorder) recent() []Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := min(r.feedLen, feedSize)
	out := make([]Event, 0, n)
	for k := r.feedLen - n; k < r.feedLen; k++ {
		out = append(out, r.feed[k%feedSize])
	}
	return out
}
