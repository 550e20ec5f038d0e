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
	sp := s.SelfPreservation()
	up := s.Config().Clock.Now().Sub(s.StartedAt())
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
	info.XMLGeneral, info.XMLApplication = toStatsXML(info.GeneralStats), toStatsXML(info.ApplicationStats)
	return info
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
