package dashboard

import (
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/eurekagate/eurekagate/registry"
)

// maxHeartbeatApps bounds the apps whose heartbeats one api/changes
// request returns (the page asks for the apps it shows).
const maxHeartbeatApps = 50

// Changes is api/changes: what changed after the version the page holds.
type Changes struct {
	Head
	// Reset is true when the changes after since are no longer kept (or
	// since is not a version of this registry): the page must load
	// api/summary again. Updates and Changes are then empty.
	Reset bool `json:"reset"`
	// Updates is each changed instance's state after its last change, in
	// the order of those changes.
	Updates []Update `json:"updates"`
	// Changes is the last changes (up to 100) for the feed, oldest first.
	Changes []Event `json:"changes"`
	// Heartbeats is the last heartbeat (ms since the epoch) of each
	// instance of the apps asked for: heartbeats are not changes, so the
	// page asks for those of the apps it shows.
	Heartbeats map[string]map[string]int64 `json:"heartbeats"`
}

// Update is one instance's state after the changes.
type Update struct {
	App string `json:"app"`
	ID  string `json:"id"`
	// Removed is true when the instance left the registry (cancelled or
	// evicted); Instance is then null.
	Removed  bool      `json:"removed"`
	Instance *Instance `json:"instance"`
}

// changes serves api/changes?since=V[&wait=S][&apps=A,B], the Store's long
// poll (registry.Poll, whose rule for waits and staleness this is): the
// changes after V at once, or when one arrives, or none when the wait (S
// seconds or a duration, bounded by Config.MaxWait) ends, the request
// ends (the client leaves, the server shuts down) or the Handler is
// closed; reset when V is stale. It holds no goroutine while it waits.
// Versions here are plain numbers: the page tells another registry by its
// start time.
func (h *Handler) changes(r *http.Request) (*Changes, error) {
	q := r.URL.Query()
	since, err := strconv.ParseUint(q.Get("since"), 10, 64)
	if err != nil {
		return nil, errors.New("since: a registry version is required")
	}
	wait, err := registry.ParseWait(q.Get("wait"), h.cfg.MaxWait)
	if err != nil {
		return nil, err
	}
	p := h.store.Poll(r.Context(), registry.Poll{Since: registry.Version{Local: since}, Wait: wait, Stop: h.closed})
	h.rec.sample(false)

	changes := p.Changes
	out := &Changes{Updates: []Update{}, Changes: []Event{}, Heartbeats: map[string]map[string]int64{}, Reset: p.Stale}
	out.Head = h.head(r, p.Version.Local)
	if out.Reset {
		return out, nil
	}

	legacy := h.store.Config().LegacyLeaseExpiry
	now := out.Now.UnixMilli()
	type key struct{ app, id string }
	last := make(map[key]int, len(changes))
	for n := range changes {
		last[key{changes[n].App, changes[n].ID}] = n
	}
	for n := range changes {
		c := &changes[n]
		if last[key{c.App, c.ID}] != n {
			continue // a later change of the same instance says where it ended
		}
		u := Update{App: c.App, ID: c.ID, Removed: c.Kind.Removes()}
		if !u.Removed {
			i := instanceOf(c.Instance, c.Lease, legacy, now)
			u.Instance = &i
		}
		out.Updates = append(out.Updates, u)
	}
	for _, c := range changes[max(0, len(changes)-feedSize):] {
		out.Changes = append(out.Changes, eventOf(&c))
	}

	if apps := q.Get("apps"); apps != "" {
		names := strings.Split(apps, ",")
		for _, name := range names[:min(len(names), maxHeartbeatApps)] {
			a, ok := h.store.Application(strings.ToUpper(name))
			if !ok {
				continue
			}
			hb := make(map[string]int64, len(a.Instances))
			for _, i := range a.Instances {
				hb[i.ID()] = lastHeartbeat(i.LeaseInfo, legacy)
			}
			out.Heartbeats[a.Name] = hb
		}
	}
	return out, nil
}
