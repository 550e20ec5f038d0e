package httpapi

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"net/http"
	"runtime"
	"sort"
	"strings"
	"time"

	"github.com/samber/lo"

	"github.com/eurekagate/eurekagate/eureka"
	"github.com/eurekagate/eurekagate/internal/version"
	"github.com/eurekagate/eurekagate/registry/regions"
	"github.com/eurekagate/eurekagate/registry/replication"
)

// StatusInfo is the document of GET /status, shaped like Eureka's
// StatusInfo (including its "isHeathly" spelling).
type StatusInfo struct {
	XMLName          xml.Name          `json:"-" xml:"statusInfo"`
	GeneralStats     map[string]string `json:"generalStats" xml:"-"`
	ApplicationStats map[string]string `json:"applicationStats" xml:"-"`
	IsHealthy        bool              `json:"isHeathly" xml:"isHeathly"`
	// Peers is the replication state of each peer, if the node has any.
	Peers []replication.PeerStats `json:"peers,omitempty" xml:"-"`
	// RemoteRegions is the state of each remote region, in configured
	// order, if the node has any (JSON only, as Peers; the maps carry it
	// too, as strings, for Eureka's readers and XML: see remoteRegionStats).
	RemoteRegions []RemoteRegionStatus `json:"remoteRegions,omitempty" xml:"-"`

	// XML renders the maps as elements.
	XMLGeneral     statsXML `json:"-" xml:"generalStats"`
	XMLApplication statsXML `json:"-" xml:"applicationStats"`
}

type statsXML []statXML

type statXML struct {
	XMLName xml.Name
	Value   string `xml:",chardata"`
}

func toStatsXML(m map[string]string) statsXML {
	keys := lo.Keys(m)
	sort.Strings(keys)
	return lo.Map(keys, func(k string, _ int) statXML { return statXML{XMLName: xml.Name{Local: k}, Value: m[k]} })
}

// statusInfo returns the server status document of GET /status.
func (a *API) statusInfo() *StatusInfo {
	s := a.store
	var mem runtime.MemStats
	runtime.ReadMemStats(&mem)
	sp := s.Stats().SelfPreservation()
	up := s.Config().Clock.Now().Sub(s.Stats().StartedAt())
	info := &StatusInfo{
		GeneralStats: map[string]string{
			"environment":          a.env,
			"num-of-cpus":          fmt.Sprint(runtime.NumCPU()),
			"total-avail-memory":   fmt.Sprintf("%dmb", mem.Sys>>20),
			"current-memory-usage": fmt.Sprintf("%dmb (%d%%)", mem.HeapAlloc>>20, 100*mem.HeapAlloc/max(mem.Sys, 1)),
			"server-uptime":        formatUptime(up),
			"version":              version.String(),
		},
		ApplicationStats: map[string]string{
			"registered-instances":  fmt.Sprint(s.Len()),
			"renews-last-minute":    fmt.Sprint(sp.RenewsLastMinute),
			"renew-threshold":       fmt.Sprint(sp.Threshold),
			"self-preservation-on":  fmt.Sprint(sp.Active),
			"expected-renew-client": fmt.Sprint(sp.ExpectedRenewingClients),
		},
		IsHealthy: true,
	}
	var registered, available, unavailable []string
	if a.peers != nil {
		info.Peers = a.peers.Stats()
		for _, p := range info.Peers {
			registered = append(registered, p.URL)
			if !p.Down {
				available = append(available, p.URL)
			} else {
				unavailable = append(unavailable, p.URL)
			}
		}
	}
	info.ApplicationStats["registered-replicas"] = strings.Join(registered, ", ")
	info.ApplicationStats["available-replicas"] = strings.Join(available, ", ")
	info.ApplicationStats["unavailable-replicas"] = strings.Join(unavailable, ", ")
	a.remoteRegionStats(info)
	info.XMLGeneral, info.XMLApplication = toStatsXML(info.GeneralStats), toStatsXML(info.ApplicationStats)
	return info
}

// RemoteRegionStatus is one remote region in the /status document
// (registry/regions.State): its instances are counted here, never in
// registered-instances, which counts this region's leases.
type RemoteRegionStatus struct {
	Name string `json:"name"`
	// Ready is true once its registry has been read once; Dropped when it
	// stopped answering for longer than the retention and its instances
	// were dropped.
	Ready   bool `json:"ready"`
	Dropped bool `json:"dropped"`
	// Apps and Instances count what this node holds of the region.
	Apps      int `json:"apps"`
	Instances int `json:"instances"`
	// LastSync is its last successful read, LastAttempt its last read;
	// absent before the first. LastError is the last read's error, absent
	// when it succeeded.
	LastSync    time.Time `json:"last_sync,omitzero"`
	LastAttempt time.Time `json:"last_attempt,omitzero"`
	LastError   string    `json:"last_error,omitempty"`
	// Syncs and Failures count the reads that succeeded and failed.
	Syncs    uint64 `json:"syncs"`
	Failures uint64 `json:"failures"`
}

// remoteRegionStats adds the remote regions to info, when the Store has
// any (without, the document is as it always was): this node's region in
// the general stats ("region"), and in the application stats, as
// Eureka's replicas are, the regions ("remote-regions"), those serving a
// registry ("available-remote-regions": ready, not dropped) and the others
// ("unavailable-remote-regions"), comma-separated, and per region
// "remote-region.<name>.<field>" for ready, dropped, apps, instances,
// last-sync, last-attempt (RFC 3339, UTC, "" before the first), last-error,
// syncs and failures. Only string-valued keys of the two maps: the shape
// Eureka's StatusInfo readers (and the XML document) already accept.
func (a *API) remoteRegionStats(info *StatusInfo) {
	states := a.regions.States()
	if len(states) == 0 {
		return
	}
	info.GeneralStats["region"] = a.store.Config().Region
	var names, available, unavailable []string
	for _, st := range states {
		names = append(names, st.Name)
		if st.Ready && !st.Dropped {
			available = append(available, st.Name)
		} else {
			unavailable = append(unavailable, st.Name)
		}
		info.RemoteRegions = append(info.RemoteRegions, remoteRegionStatus(st))
		key := "remote-region." + statKey(st.Name) + "."
		for k, v := range map[string]string{
			"ready": fmt.Sprint(st.Ready), "dropped": fmt.Sprint(st.Dropped),
			"apps": fmt.Sprint(st.Apps), "instances": fmt.Sprint(st.Instances),
			"last-sync": statTime(st.LastSync), "last-attempt": statTime(st.LastAttempt),
			"last-error": st.LastError, "syncs": fmt.Sprint(st.Syncs), "failures": fmt.Sprint(st.Failures),
		} {
			info.ApplicationStats[key+k] = v
		}
	}
	info.ApplicationStats["remote-regions"] = strings.Join(names, ", ")
	info.ApplicationStats["available-remote-regions"] = strings.Join(available, ", ")
	info.ApplicationStats["unavailable-remote-regions"] = strings.Join(unavailable, ", ")
}

func remoteRegionStatus(st regions.State) RemoteRegionStatus {
	return RemoteRegionStatus{
		Name: st.Name, Ready: st.Ready, Dropped: st.Dropped, Apps: st.Apps, Instances: st.Instances,
		LastSync: st.LastSync, LastAttempt: st.LastAttempt, LastError: st.LastError,
		Syncs: st.Syncs, Failures: st.Failures,
	}
}

// statKey makes a region's name part of a stats key, which the XML
// document makes an element's name: letters, digits, '-', '_' and '.'
// stay, anything else becomes '_'.
func statKey(name string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.' {
			return r
		}
		return '_'
	}, name)
}

// statTime writes a time of the stats maps: RFC 3339 in UTC with
// milliseconds, "" for none.
func statTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format("2006-01-02T15:04:05.000Z07:00")
}

// formatUptime writes Eureka's "HH:mm" or "N days HH:mm".
func formatUptime(d time.Duration) string {
	days := int(d.Hours()) / 24
	hm := fmt.Sprintf("%02d:%02d", int(d.Hours())%24, int(d.Minutes())%60)
	if days > 0 {
		return fmt.Sprintf("%d days %s", days, hm)
	}
	return hm
}

func (a *API) status(req *Request, resp *Response) {
	info := a.statusInfo()
	f := eureka.AcceptFormat(req.Accept)
	var body []byte
	if f == eureka.FormatJSON {
		body, _ = json.Marshal(info)
	} else {
		body, _ = xml.Marshal(info)
	}
	*resp = Response{Status: http.StatusOK, ContentType: f.ContentType(), Body: body}
}

func (a *API) statusOverrides(resp *Response) {
	out := map[string]string{}
	for id, st := range a.store.Overrides() {
		out[id] = st.String()
	}
	body, _ := json.Marshal(out)
	*resp = Response{Status: http.StatusOK, ContentType: "application/json", Body: body}
}
