package dashboard

import (
	"github.com/eurekagate/eurekagate/registry/regions"
	"time"
)

// RegionsView is api/regions: this node's region and the state of each
// remote region it serves (registry/regions.State), in configured order.
// Remote instances are counted here only: the rest of the page (the
// applications, the instance totals, the charts) is the local registry's.
type RegionsView struct {
	// Region is this node's own region (registry.Config.Region).
	Region string `json:"region"`
	// Now is the server's time the ages are measured at.
	Now time.Time `json:"now"`
	// Regions is the remote regions: none (an empty list) when the node
	// has none, and the page shows no block.
	Regions []RegionView `json:"regions"`
}

// RegionView is one remote region's row.
type RegionView struct {
	Name string `json:"name"`
	// State sums up the rest: "waiting" (never read yet), "unreachable"
	// (never read, and reads fail), "ready" (the last read succeeded),
	// "stale" (read once, the last read failed: its last registry is
	// served) or "dropped" (silent for longer than the retention: its
	// instances were dropped).
	State   string `json:"state"`
	Ready   bool   `json:"ready"`
	Dropped bool   `json:"dropped"`
	// Apps and Instances count what the node holds of the region.
	Apps      int `json:"apps"`
	Instances int `json:"instances"`
	// LastSync is its last successful read and LastSyncAgeMS how long ago
	// that was; LastAttempt its last read. Absent before the first.
	LastSync      time.Time `json:"last_sync,omitzero"`
	LastSyncAgeMS *int64    `json:"last_sync_age_ms,omitempty"`
	LastAttempt   time.Time `json:"last_attempt,omitzero"`
	// LastError is the last read's error, absent when it succeeded.
	LastError string `json:"last_error,omitempty"`
	// Syncs and Failures count the reads that succeeded and failed.
	Syncs    uint64 `json:"syncs"`
	Failures uint64 `json:"failures"`
}

// regions serves api/regions from the Store, at the time of the request.
func (h *Handler) regions() RegionsView {
	now := h.store.Config().Clock.Now()
	v := RegionsView{Region: h.store.Config().Region, Now: now, Regions: []RegionView{}}
	for _, st := range regions.MirrorOf(h.store).States() {
		r := RegionView{
			Name: st.Name, Ready: st.Ready, Dropped: st.Dropped, Apps: st.Apps, Instances: st.Instances,
			LastSync: st.LastSync, LastAttempt: st.LastAttempt, LastError: st.LastError,
			Syncs: st.Syncs, Failures: st.Failures,
		}
		if !st.LastSync.IsZero() {
			age := max(0, now.Sub(st.LastSync).Milliseconds())
			r.LastSyncAgeMS = &age
		}
		switch {
		case st.Dropped:
			r.State = "dropped"
		case !st.Ready && st.Failures > 0:
			r.State = "unreachable"
		case !st.Ready:
			r.State = "waiting"
		case st.LastError != "":
			r.State = "stale"
		default:
			r.State = "ready"
		}
		v.Regions = append(v.Regions, r)
	}
	return v
}
