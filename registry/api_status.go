package registry

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"net/http"
	"os"
	"runtime"
	"sort"
	"strings"
	"time"

	"github.com/samber/lo"

	"github.com/eurekagate/eurekagate/eureka"
)

// StatusInfo is the document of GET /status, shaped like Eureka's
// StatusInfo (including its "isHeathly" spelling).
type StatusInfo struct {
	XMLName          xml.Name          `json:"-" xml:"statusInfo"`
	GeneralStats     map[string]string `json:"generalStats" xml:"-"`
	ApplicationStats map[string]string `json:"applicationStats" xml:"-"`
	IsHealthy        bool              `json:"isHeathly" xml:"isHeathly"`
	// Peers is the replication state of each peer, if the node has any.
	Peers []PeerStats `json:"peers,omitempty" xml:"-"`

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

// Status returns the server status document.
func (s *Store) Status() *StatusInfo {
	var mem runtime.MemStats
	runtime.ReadMemStats(&mem)
	env := os.Getenv("EUREKA_ENVIRONMENT")
	if env == "" {
		env = "test"
	}
	sp := s.SelfPreservation()
	up := s.clock.Now().Sub(s.started)
	info := &StatusInfo{
		GeneralStats: map[string]string{
			"environment":          env,
			"num-of-cpus":          fmt.Sprint(runtime.NumCPU()),
			"total-avail-memory":   fmt.Sprintf("%dmb", mem.Sys>>20),
			"current-memory-usage": fmt.Sprintf("%dmb (%d%%)", mem.HeapAlloc>>20, 100*mem.HeapAlloc/max(mem.Sys, 1)),
			"server-uptime":        formatUptime(up),
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
	if ps, ok := s.replicatorStats(); ok {
		info.Peers = ps
		for _, p := range ps {
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
	info.XMLGeneral, info.XMLApplication = toStatsXML(info.GeneralStats), toStatsXML(info.ApplicationStats)
	return info
}

// replicatorStats returns the peers' replication state, if replication is on.
func (s *Store) replicatorStats() ([]PeerStats, bool) {
	s.mu.RLock()
	r := s.replicator
	s.mu.RUnlock()
	if p, ok := r.(*Peers); ok {
		return p.Stats(), true
	}
	return nil, false
}

// PeerStats returns the replication state of each peer (none without
// replication).
func (s *Store) PeerStats() []PeerStats {
	ps, _ := s.replicatorStats()
	return ps
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
	info := a.store.Status()
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
