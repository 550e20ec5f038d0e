package eureka

import (
	"encoding/json"
	"errors"
	"strings"
)

// ErrCannotParse is returned for a body that is not a readable document. The
// server answers it with 400 "cannot parse request body", as Eureka does.
var ErrCannotParse = errors.New("cannot parse request body")

// jsonInstance is every InstanceInfo dialect the clients send. Go matches
// JSON keys case-insensitively, so "overriddenStatus" also reads fargo's
// "overriddenstatus".
type jsonInstance struct {
	InstanceID                    flexString      `json:"instanceId"`
	HostName                      flexString      `json:"hostName"`
	App                           flexString      `json:"app"`
	AppGroupName                  flexString      `json:"appGroupName"`
	IPAddr                        flexString      `json:"ipAddr"`
	SID                           flexString      `json:"sid"`
	Status                        flexString      `json:"status"`
	OverriddenStatus              flexString      `json:"overriddenStatus"`
	Port                          *jsonPort       `json:"port"`
	SecurePort                    *jsonPort       `json:"securePort"`
	CountryID                     flexInt         `json:"countryId"`
	DataCenterInfo                *jsonDataCenter `json:"dataCenterInfo"`
	LeaseInfo                     *jsonLease      `json:"leaseInfo"`
	Metadata                      flexMap         `json:"metadata"`
	HomePageURL                   flexString      `json:"homePageUrl"`
	StatusPageURL                 flexString      `json:"statusPageUrl"`
	HealthCheckURL                flexString      `json:"healthCheckUrl"`
	SecureHealthCheckURL          flexString      `json:"secureHealthCheckUrl"`
	VIPAddress                    flexString      `json:"vipAddress"`
	SecureVIPAddress              flexString      `json:"secureVipAddress"`
	IsCoordinatingDiscoveryServer flexBool        `json:"isCoordinatingDiscoveryServer"`
	LastUpdatedTimestamp          flexInt         `json:"lastUpdatedTimestamp"`
	LastDirtyTimestamp            flexInt         `json:"lastDirtyTimestamp"`
	ActionType                    flexString      `json:"actionType"`
	ASGName                       flexString      `json:"asgName"`
}

// jsonPort is {"$":8080,"@enabled":"true"} in any of its dialects, or a
// bare number or numeric string.
type jsonPort struct {
	Number  flexInt
	Enabled flexBool
}

func (p *jsonPort) UnmarshalJSON(b []byte) error {
	if isNull(b) {
		return nil
	}
	if len(b) > 0 && b[0] != '{' {
		return p.Number.UnmarshalJSON(b)
	}
	var obj struct {
		Number  flexInt  `json:"$"`
		Enabled flexBool `json:"@enabled"`
	}
	if err := json.Unmarshal(b, &obj); err != nil {
		return err
	}
	p.Number, p.Enabled = obj.Number, obj.Enabled
	return nil
}

type jsonDataCenter struct {
	Class    flexString `json:"@class"`
	Name     flexString `json:"name"`
	Metadata flexMap    `json:"metadata"`
}

type jsonLease struct {
	RenewalIntervalInSecs flexInt `json:"renewalIntervalInSecs"`
	DurationInSecs        flexInt `json:"durationInSecs"`
	RegistrationTimestamp flexInt `json:"registrationTimestamp"`
	LastRenewalTimestamp  flexInt `json:"lastRenewalTimestamp"`
	RenewalTimestamp      flexInt `json:"renewalTimestamp"` // legacy alias
	EvictionTimestamp     flexInt `json:"evictionTimestamp"`
	ServiceUpTimestamp    flexInt `json:"serviceUpTimestamp"`
}

// DecodeInstanceJSON reads an InstanceInfo from {"instance":{...}} or from
// a bare InstanceInfo object. Defaults follow the Java server's builder:
// status UP, ports 7001 (enabled) and 7002 (disabled), countryId 1, sid
// "na". A missing lastDirtyTimestamp is left 0 for the caller to fill in.
func DecodeInstanceJSON(data []byte) (*InstanceInfo, error) {
	var doc struct {
		Instance *jsonInstance `json:"instance"`
		jsonInstance
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, ErrCannotParse
	}
	w := doc.Instance
	if w == nil {
		w = &doc.jsonInstance
	}
	return w.instance(), nil
}

// DecodeApplicationsJSON reads an {"applications":{...}} document: a full
// registry, a delta or a VIP result. "application" and "instance" may be
// arrays or single objects; versions__delta may be a number or a string.
func DecodeApplicationsJSON(data []byte) (*Applications, error) {
	var doc struct {
		Applications *jsonApplications `json:"applications"`
	}
	if err := json.Unmarshal(data, &doc); err != nil || doc.Applications == nil {
		return nil, ErrCannotParse
	}
	return doc.Applications.applications(), nil
}

// DecodeApplicationJSON reads an {"application":{...}} document.
func DecodeApplicationJSON(data []byte) (*Application, error) {
	var doc struct {
		Application *jsonApplication `json:"application"`
	}
	if err := json.Unmarshal(data, &doc); err != nil || doc.Application == nil {
		return nil, ErrCannotParse
	}
	return doc.Application.application(), nil
}

type jsonApplications struct {
	VersionsDelta flexInt                   `json:"versions__delta"`
	AppsHashcode  flexString                `json:"apps__hashcode"`
	Application   flexList[jsonApplication] `json:"application"`
}

type jsonApplication struct {
	Name     flexString             `json:"name"`
	Instance flexList[jsonInstance] `json:"instance"`
}

func (w *jsonApplications) applications() *Applications {
	apps := &Applications{VersionsDelta: -1, AppsHashcode: w.AppsHashcode.V}
	if w.VersionsDelta.Set {
		apps.VersionsDelta = w.VersionsDelta.V
	}
	for n := range w.Application {
		apps.Applications = append(apps.Applications, w.Application[n].application())
	}
	return apps
}

func (w *jsonApplication) application() *Application {
	a := &Application{Name: strings.ToUpper(w.Name.V)}
	for n := range w.Instance {
		a.Instances = append(a.Instances, w.Instance[n].instance())
	}
	return a
}

func (w *jsonInstance) instance() *InstanceInfo {
	i := &InstanceInfo{
		InstanceID:                    w.InstanceID.V,
		HasInstanceID:                 w.InstanceID.Set,
		HostName:                      w.HostName.V,
		App:                           strings.ToUpper(w.App.V),
		AppGroupName:                  strings.ToUpper(w.AppGroupName.V),
		IPAddr:                        w.IPAddr.V,
		SID:                           w.SID.V,
		Status:                        StatusUp,
		OverriddenStatus:              ParseStatus(w.OverriddenStatus.V),
		Port:                          Port{Number: DefaultPort, Enabled: true},
		SecurePort:                    Port{Number: DefaultSecurePort},
		CountryID:                     1,
		Metadata:                      w.Metadata,
		HomePageURL:                   w.HomePageURL.V,
		StatusPageURL:                 w.StatusPageURL.V,
		HealthCheckURL:                w.HealthCheckURL.V,
		SecureHealthCheckURL:          w.SecureHealthCheckURL.V,
		VIPAddress:                    w.VIPAddress.V,
		SecureVIPAddress:              w.SecureVIPAddress.V,
		IsCoordinatingDiscoveryServer: w.IsCoordinatingDiscoveryServer.V,
		LastUpdatedTimestamp:          w.LastUpdatedTimestamp.V,
		LastDirtyTimestamp:            w.LastDirtyTimestamp.V,
		ActionType:                    ParseActionType(w.ActionType.V),
		ASGName:                       w.ASGName.V,
	}
	if i.SID == "" {
		i.SID = "na"
	}
	if w.Status.Set {
		i.Status = ParseStatus(w.Status.V)
	}
	if w.Port != nil {
		i.Port = w.Port.port(DefaultPort, true)
	}
	if w.SecurePort != nil {
		i.SecurePort = w.SecurePort.port(DefaultSecurePort, false)
	}
	if w.CountryID.Set {
		i.CountryID = int(w.CountryID.V)
	}
	if dc := w.DataCenterInfo; dc != nil {
		i.DataCenterInfo = dataCenter(dc.Class.V, dc.Name.V, dc.Metadata)
	}
	if l := w.LeaseInfo; l != nil {
		i.LeaseInfo = LeaseInfo{
			RenewalIntervalInSecs: int(l.RenewalIntervalInSecs.V),
			DurationInSecs:        int(l.DurationInSecs.V),
			RegistrationTimestamp: l.RegistrationTimestamp.V,
			LastRenewalTimestamp:  l.LastRenewalTimestamp.V,
			EvictionTimestamp:     l.EvictionTimestamp.V,
			ServiceUpTimestamp:    l.ServiceUpTimestamp.V,
		}
		if !l.LastRenewalTimestamp.Set {
			i.LeaseInfo.LastRenewalTimestamp = l.RenewalTimestamp.V
		}
	}
	return i
}

func (p *jsonPort) port(defaultNumber int, defaultEnabled bool) Port {
	out := Port{Number: defaultNumber, Enabled: defaultEnabled}
	if p.Number.Set {
		out.Number = int(p.Number.V)
	}
	if p.Enabled.Set {
		out.Enabled = p.Enabled.V
	}
	return out
}

// dataCenter resolves the data center type from its class or, when the
// class is missing or unknown, from its name. Names are matched
// case-insensitively; an unknown name is kept as it is and written with the
// default class, as a Java server would write MyOwn.
func dataCenter(class, name string, metadata map[string]string) DataCenterInfo {
	switch {
	case strings.EqualFold(name, DataCenterAmazon) || (name == "" && class == AmazonDataCenterClass):
		name = DataCenterAmazon
	case strings.EqualFold(name, DataCenterMyOwn):
		name = DataCenterMyOwn
	case strings.EqualFold(name, DataCenterNetflix):
		name = DataCenterNetflix
	}
	dc := DataCenterInfo{Name: name}
	if name == DataCenterAmazon {
		dc.Metadata = metadata
		if dc.Metadata == nil {
			dc.Metadata = map[string]string{}
		}
	}
	return dc
}
