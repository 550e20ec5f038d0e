package eureka

// The decoders as they were before the streaming rewrite (encoding/json
// with a custom UnmarshalJSON per lenient field, encoding/xml reflection),
// kept only as the reference of the differential fuzz targets in
// differential_test.go. Identifiers carry a "legacy" prefix.

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"errors"
	"math"
	"strconv"
	"strings"
)

// ---- from flex.go ----

// Lenient scalar types for decoding: each accepts the JSON shapes that real
// clients send for the field, and null as "absent".

var legacyErrBadNumber = errors.New("eureka: not a number")

// legacyFlexString accepts a string, a number or a boolean (kept as its text).
type legacyFlexString struct {
	V   string
	Set bool
}

func (f *legacyFlexString) UnmarshalJSON(b []byte) error {
	switch {
	case legacyIsNull(b):
		*f = legacyFlexString{}
	case len(b) > 0 && b[0] == '"':
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*f = legacyFlexString{V: s, Set: true}
	case len(b) > 0 && (b[0] == '{' || b[0] == '['):
		return errors.New("eureka: expected a string")
	default:
		*f = legacyFlexString{V: string(b), Set: true}
	}
	return nil
}

// legacyFlexInt accepts a number or a numeric string.
type legacyFlexInt struct {
	V   int64
	Set bool
}

func (f *legacyFlexInt) UnmarshalJSON(b []byte) error {
	if legacyIsNull(b) {
		*f = legacyFlexInt{}
		return nil
	}
	s := string(b)
	if len(b) > 0 && b[0] == '"' {
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		s = strings.TrimSpace(s)
		if s == "" {
			*f = legacyFlexInt{}
			return nil
		}
	}
	v, err := legacyParseInt(s)
	if err != nil {
		return err
	}
	*f = legacyFlexInt{V: v, Set: true}
	return nil
}

func legacyParseInt(s string) (int64, error) {
	if v, err := strconv.ParseInt(s, 10, 64); err == nil {
		return v, nil
	}
	fl, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(fl) || math.IsInf(fl, 0) || fl > math.MaxInt64 || fl < math.MinInt64 {
		return 0, legacyErrBadNumber
	}
	return int64(fl), nil
}

// legacyFlexBool accepts a boolean or the strings "true"/"false" (any case).
type legacyFlexBool struct {
	V   bool
	Set bool
}

func (f *legacyFlexBool) UnmarshalJSON(b []byte) error {
	switch s := strings.ToLower(strings.Trim(string(b), `"`)); {
	case legacyIsNull(b):
		*f = legacyFlexBool{}
	case s == "true":
		*f = legacyFlexBool{V: true, Set: true}
	case s == "false" || s == "":
		*f = legacyFlexBool{V: false, Set: true}
	default:
		return errors.New("eureka: expected a boolean")
	}
	return nil
}

// legacyFlexMap is a string map whose values may be any scalar; the Java EmptyMap
// marker ("@class") is dropped.
type legacyFlexMap map[string]string

func (f *legacyFlexMap) UnmarshalJSON(b []byte) error {
	if legacyIsNull(b) {
		*f = nil
		return nil
	}
	var raw map[string]legacyFlexString
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	m := make(map[string]string, len(raw))
	for k, v := range raw {
		if !v.Set || (k == "@class" && strings.HasSuffix(v.V, "EmptyMap")) {
			continue
		}
		m[k] = v.V
	}
	*f = m
	return nil
}

// legacyFlexList accepts an array of T or a single T, as old XStream-JSON servers
// wrote a lone element without the array.
type legacyFlexList[T any] []T

func (f *legacyFlexList[T]) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	switch {
	case legacyIsNull(b):
		*f = nil
		return nil
	case len(b) > 0 && b[0] == '[':
		var list []T
		if err := json.Unmarshal(b, &list); err != nil {
			return err
		}
		*f = list
		return nil
	}
	var one T
	if err := json.Unmarshal(b, &one); err != nil {
		return err
	}
	*f = []T{one}
	return nil
}

func legacyIsNull(b []byte) bool { return string(bytes.TrimSpace(b)) == "null" }

// ---- from json_decode.go ----

// legacyJsonInstance is every InstanceInfo dialect the clients send. Go matches
// JSON keys case-insensitively, so "overriddenStatus" also reads fargo's
// "overriddenstatus".
type legacyJsonInstance struct {
	InstanceID                    legacyFlexString      `json:"instanceId"`
	HostName                      legacyFlexString      `json:"hostName"`
	App                           legacyFlexString      `json:"app"`
	AppGroupName                  legacyFlexString      `json:"appGroupName"`
	IPAddr                        legacyFlexString      `json:"ipAddr"`
	SID                           legacyFlexString      `json:"sid"`
	Status                        legacyFlexString      `json:"status"`
	OverriddenStatus              legacyFlexString      `json:"overriddenStatus"`
	Port                          *legacyJsonPort       `json:"port"`
	SecurePort                    *legacyJsonPort       `json:"securePort"`
	CountryID                     legacyFlexInt         `json:"countryId"`
	DataCenterInfo                *legacyJsonDataCenter `json:"dataCenterInfo"`
	LeaseInfo                     *legacyJsonLease      `json:"leaseInfo"`
	Metadata                      legacyFlexMap         `json:"metadata"`
	HomePageURL                   legacyFlexString      `json:"homePageUrl"`
	StatusPageURL                 legacyFlexString      `json:"statusPageUrl"`
	HealthCheckURL                legacyFlexString      `json:"healthCheckUrl"`
	SecureHealthCheckURL          legacyFlexString      `json:"secureHealthCheckUrl"`
	VIPAddress                    legacyFlexString      `json:"vipAddress"`
	SecureVIPAddress              legacyFlexString      `json:"secureVipAddress"`
	IsCoordinatingDiscoveryServer legacyFlexBool        `json:"isCoordinatingDiscoveryServer"`
	LastUpdatedTimestamp          legacyFlexInt         `json:"lastUpdatedTimestamp"`
	LastDirtyTimestamp            legacyFlexInt         `json:"lastDirtyTimestamp"`
	ActionType                    legacyFlexString      `json:"actionType"`
	ASGName                       legacyFlexString      `json:"asgName"`
}

// legacyJsonPort is {"$":8080,"@enabled":"true"} in any of its dialects, or a
// bare number or numeric string.
type legacyJsonPort struct {
	Number  legacyFlexInt
	Enabled legacyFlexBool
}

func (p *legacyJsonPort) UnmarshalJSON(b []byte) error {
	if legacyIsNull(b) {
		return nil
	}
	if len(b) > 0 && b[0] != '{' {
		return p.Number.UnmarshalJSON(b)
	}
	var obj struct {
		Number  legacyFlexInt  `json:"$"`
		Enabled legacyFlexBool `json:"@enabled"`
	}
	if err := json.Unmarshal(b, &obj); err != nil {
		return err
	}
	p.Number, p.Enabled = obj.Number, obj.Enabled
	return nil
}

type legacyJsonDataCenter struct {
	Class    legacyFlexString `json:"@class"`
	Name     legacyFlexString `json:"name"`
	Metadata legacyFlexMap    `json:"metadata"`
}

type legacyJsonLease struct {
	RenewalIntervalInSecs legacyFlexInt `json:"renewalIntervalInSecs"`
	DurationInSecs        legacyFlexInt `json:"durationInSecs"`
	RegistrationTimestamp legacyFlexInt `json:"registrationTimestamp"`
	LastRenewalTimestamp  legacyFlexInt `json:"lastRenewalTimestamp"`
	RenewalTimestamp      legacyFlexInt `json:"renewalTimestamp"` // legacy alias
	EvictionTimestamp     legacyFlexInt `json:"evictionTimestamp"`
	ServiceUpTimestamp    legacyFlexInt `json:"serviceUpTimestamp"`
}

// legacyDecodeInstanceJSON reads an InstanceInfo from {"instance":{...}} or from
// a bare InstanceInfo object. Defaults follow the Java server's builder:
// status UP, ports 7001 (enabled) and 7002 (disabled), countryId 1, sid
// "na". A missing lastDirtyTimestamp is left 0 for the caller to fill in.
func legacyDecodeInstanceJSON(data []byte) (*InstanceInfo, error) {
	var doc struct {
		Instance *legacyJsonInstance `json:"instance"`
		legacyJsonInstance
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, ErrCannotParse
	}
	w := doc.Instance
	if w == nil {
		w = &doc.legacyJsonInstance
	}
	return w.instance(), nil
}

// legacyDecodeApplicationsJSON reads an {"applications":{...}} document: a full
// registry, a delta or a VIP result. "application" and "instance" may be
// arrays or single objects; versions__delta may be a number or a string.
func legacyDecodeApplicationsJSON(data []byte) (*Applications, error) {
	var doc struct {
		Applications *legacyJsonApplications `json:"applications"`
	}
	if err := json.Unmarshal(data, &doc); err != nil || doc.Applications == nil {
		return nil, ErrCannotParse
	}
	return doc.Applications.applications(), nil
}

// legacyDecodeApplicationJSON reads an {"application":{...}} document.
func legacyDecodeApplicationJSON(data []byte) (*Application, error) {
	var doc struct {
		Application *legacyJsonApplication `json:"application"`
	}
	if err := json.Unmarshal(data, &doc); err != nil || doc.Application == nil {
		return nil, ErrCannotParse
	}
	return doc.Application.application(), nil
}

type legacyJsonApplications struct {
	VersionsDelta legacyFlexInt                         `json:"versions__delta"`
	AppsHashcode  legacyFlexString                      `json:"apps__hashcode"`
	Application   legacyFlexList[legacyJsonApplication] `json:"application"`
}

type legacyJsonApplication struct {
	Name     legacyFlexString                   `json:"name"`
	Instance legacyFlexList[legacyJsonInstance] `json:"instance"`
}

func (w *legacyJsonApplications) applications() *Applications {
	apps := &Applications{VersionsDelta: -1, AppsHashcode: w.AppsHashcode.V}
	if w.VersionsDelta.Set {
		apps.VersionsDelta = w.VersionsDelta.V
	}
	for n := range w.Application {
		apps.Applications = append(apps.Applications, w.Application[n].application())
	}
	return apps
}

func (w *legacyJsonApplication) application() *Application {
	a := &Application{Name: strings.ToUpper(w.Name.V)}
	for n := range w.Instance {
		a.Instances = append(a.Instances, w.Instance[n].instance())
	}
	return a
}

func (w *legacyJsonInstance) instance() *InstanceInfo {
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
		i.DataCenterInfo = legacyDataCenter(dc.Class.V, dc.Name.V, dc.Metadata)
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

func (p *legacyJsonPort) port(defaultNumber int, defaultEnabled bool) Port {
	out := Port{Number: defaultNumber, Enabled: defaultEnabled}
	if p.Number.Set {
		out.Number = int(p.Number.V)
	}
	if p.Enabled.Set {
		out.Enabled = p.Enabled.V
	}
	return out
}

// legacyDataCenter resolves the data center type from its class or, when the
// class is missing or unknown, from its name. Names are matched
// case-insensitively; an unknown name is kept as it is and written with the
// default class, as a Java server would write MyOwn.
func legacyDataCenter(class, name string, metadata map[string]string) DataCenterInfo {
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

// ---- from xml_decode.go ----

// legacyXmlInstance is an <instance> as XStream and fargo write it. The root
// element's name is not checked.
type legacyXmlInstance struct {
	InstanceID                    *string              `xml:"instanceId"`
	HostName                      string               `xml:"hostName"`
	App                           string               `xml:"app"`
	AppGroupName                  string               `xml:"appGroupName"`
	IPAddr                        string               `xml:"ipAddr"`
	SID                           string               `xml:"sid"`
	Status                        *string              `xml:"status"`
	OverriddenStatusLower         string               `xml:"overriddenstatus"`
	OverriddenStatusCamel         string               `xml:"overriddenStatus"`
	Port                          *legacyXmlPort       `xml:"port"`
	SecurePort                    *legacyXmlPort       `xml:"securePort"`
	CountryID                     string               `xml:"countryId"`
	DataCenterInfo                *legacyXmlDataCenter `xml:"dataCenterInfo"`
	LeaseInfo                     *legacyXmlLease      `xml:"leaseInfo"`
	Metadata                      legacyXmlMap         `xml:"metadata"`
	HomePageURL                   string               `xml:"homePageUrl"`
	StatusPageURL                 string               `xml:"statusPageUrl"`
	HealthCheckURL                string               `xml:"healthCheckUrl"`
	SecureHealthCheckURL          string               `xml:"secureHealthCheckUrl"`
	VIPAddress                    string               `xml:"vipAddress"`
	SecureVIPAddress              string               `xml:"secureVipAddress"`
	IsCoordinatingDiscoveryServer string               `xml:"isCoordinatingDiscoveryServer"`
	LastUpdatedTimestamp          string               `xml:"lastUpdatedTimestamp"`
	LastDirtyTimestamp            string               `xml:"lastDirtyTimestamp"`
	ActionType                    string               `xml:"actionType"`
	ASGName                       string               `xml:"asgName"`
}

type legacyXmlPort struct {
	Enabled *string `xml:"enabled,attr"`
	Number  string  `xml:",chardata"`
}

type legacyXmlDataCenter struct {
	Class    string       `xml:"class,attr"`
	Name     string       `xml:"name"`
	Metadata legacyXmlMap `xml:"metadata"`
}

type legacyXmlLease struct {
	RenewalIntervalInSecs string `xml:"renewalIntervalInSecs"`
	DurationInSecs        string `xml:"durationInSecs"`
	RegistrationTimestamp string `xml:"registrationTimestamp"`
	LastRenewalTimestamp  string `xml:"lastRenewalTimestamp"`
	RenewalTimestamp      string `xml:"renewalTimestamp"`
	EvictionTimestamp     string `xml:"evictionTimestamp"`
	ServiceUpTimestamp    string `xml:"serviceUpTimestamp"`
}

// legacyXmlMap reads one child element per key, unescaping XStream's element
// names. The "class" attribute (the EmptyMap marker) is ignored.
type legacyXmlMap map[string]string

func (m *legacyXmlMap) UnmarshalXML(d *xml.Decoder, start xml.StartElement) error {
	out := map[string]string{}
	for {
		tok, err := d.Token()
		if err != nil {
			return err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			var text string
			if err := d.DecodeElement(&text, &t); err != nil {
				return err
			}
			out[UnescapeXMLName(legacyXmlName(t.Name))] = text
		case xml.EndElement:
			*m = out
			return nil
		}
	}
}

func legacyXmlName(n xml.Name) string {
	if n.Space != "" {
		return n.Space + ":" + n.Local
	}
	return n.Local
}

// legacyDecodeInstanceXML reads an <instance> document with the same defaults as
// legacyDecodeInstanceJSON. Status text is upper-cased first; empty or unknown
// text is UNKNOWN, except that a missing <status> means UP.
func legacyDecodeInstanceXML(data []byte) (*InstanceInfo, error) {
	var w legacyXmlInstance
	if err := xml.NewDecoder(bytes.NewReader(data)).Decode(&w); err != nil {
		return nil, ErrCannotParse
	}
	return w.instance()
}

// legacyDecodeApplicationsXML reads an <applications> document.
func legacyDecodeApplicationsXML(data []byte) (*Applications, error) {
	var w struct {
		VersionsDelta string                 `xml:"versions__delta"`
		AppsHashcode  string                 `xml:"apps__hashcode"`
		Application   []legacyXmlApplication `xml:"application"`
	}
	if err := xml.NewDecoder(bytes.NewReader(data)).Decode(&w); err != nil {
		return nil, ErrCannotParse
	}
	apps := &Applications{VersionsDelta: -1, AppsHashcode: strings.TrimSpace(w.AppsHashcode)}
	if v, ok, err := legacyXmlInt(w.VersionsDelta); err != nil {
		return nil, ErrCannotParse
	} else if ok {
		apps.VersionsDelta = v
	}
	for n := range w.Application {
		a, err := w.Application[n].application()
		if err != nil {
			return nil, err
		}
		apps.Applications = append(apps.Applications, a)
	}
	return apps, nil
}

// legacyDecodeApplicationXML reads an <application> document.
func legacyDecodeApplicationXML(data []byte) (*Application, error) {
	var w legacyXmlApplication
	if err := xml.NewDecoder(bytes.NewReader(data)).Decode(&w); err != nil {
		return nil, ErrCannotParse
	}
	return w.application()
}

type legacyXmlApplication struct {
	Name     string              `xml:"name"`
	Instance []legacyXmlInstance `xml:"instance"`
}

func (w *legacyXmlApplication) application() (*Application, error) {
	a := &Application{Name: strings.ToUpper(strings.TrimSpace(w.Name))}
	for n := range w.Instance {
		i, err := w.Instance[n].instance()
		if err != nil {
			return nil, err
		}
		a.Instances = append(a.Instances, i)
	}
	return a, nil
}

func (w *legacyXmlInstance) instance() (*InstanceInfo, error) {
	i := &InstanceInfo{
		HostName:             w.HostName,
		App:                  strings.ToUpper(w.App),
		AppGroupName:         strings.ToUpper(w.AppGroupName),
		IPAddr:               w.IPAddr,
		SID:                  w.SID,
		Status:               StatusUp,
		Port:                 Port{Number: DefaultPort, Enabled: true},
		SecurePort:           Port{Number: DefaultSecurePort},
		CountryID:            1,
		Metadata:             w.Metadata,
		HomePageURL:          w.HomePageURL,
		StatusPageURL:        w.StatusPageURL,
		HealthCheckURL:       w.HealthCheckURL,
		SecureHealthCheckURL: w.SecureHealthCheckURL,
		VIPAddress:           w.VIPAddress,
		SecureVIPAddress:     w.SecureVIPAddress,
		ActionType:           ParseActionType(strings.TrimSpace(w.ActionType)),
		ASGName:              w.ASGName,
	}
	if w.InstanceID != nil {
		i.InstanceID, i.HasInstanceID = *w.InstanceID, true
	}
	if i.SID == "" {
		i.SID = "na"
	}
	if w.Status != nil {
		i.Status = legacyParseXMLStatus(*w.Status)
	}
	i.OverriddenStatus = legacyParseXMLStatus(w.OverriddenStatusLower)
	if i.OverriddenStatus == StatusUnknown {
		i.OverriddenStatus = legacyParseXMLStatus(w.OverriddenStatusCamel)
	}
	var err error
	// Unsecure ports count as enabled unless the attribute says "false";
	// secure ports only when it says "true" (XStream's converter).
	if w.Port != nil {
		if i.Port, err = w.Port.port(DefaultPort, func(a string) bool { return a != "false" }); err != nil {
			return nil, err
		}
	}
	if w.SecurePort != nil {
		if i.SecurePort, err = w.SecurePort.port(DefaultSecurePort, func(a string) bool { return a == "true" }); err != nil {
			return nil, err
		}
	}
	var country int64 = 1
	var renewal, duration int64
	ints := legacyNumberFields{
		{w.LastUpdatedTimestamp, &i.LastUpdatedTimestamp},
		{w.LastDirtyTimestamp, &i.LastDirtyTimestamp},
		{w.CountryID, &country},
	}
	if l := w.LeaseInfo; l != nil {
		if strings.TrimSpace(l.LastRenewalTimestamp) == "" {
			l.LastRenewalTimestamp = l.RenewalTimestamp
		}
		ints = append(ints, legacyNumberFields{
			{l.RenewalIntervalInSecs, &renewal},
			{l.DurationInSecs, &duration},
			{l.RegistrationTimestamp, &i.LeaseInfo.RegistrationTimestamp},
			{l.LastRenewalTimestamp, &i.LeaseInfo.LastRenewalTimestamp},
			{l.EvictionTimestamp, &i.LeaseInfo.EvictionTimestamp},
			{l.ServiceUpTimestamp, &i.LeaseInfo.ServiceUpTimestamp},
		}...)
	}
	if err := ints.parse(); err != nil {
		return nil, err
	}
	i.CountryID = int(country)
	i.LeaseInfo.RenewalIntervalInSecs, i.LeaseInfo.DurationInSecs = int(renewal), int(duration)
	i.IsCoordinatingDiscoveryServer = strings.EqualFold(strings.TrimSpace(w.IsCoordinatingDiscoveryServer), "true")
	if dc := w.DataCenterInfo; dc != nil {
		i.DataCenterInfo = legacyDataCenter(dc.Class, strings.TrimSpace(dc.Name), dc.Metadata)
	}
	return i, nil
}

func (p *legacyXmlPort) port(defaultNumber int, enabled func(attr string) bool) (Port, error) {
	out := Port{Number: defaultNumber}
	if v, ok, err := legacyXmlInt(p.Number); err != nil {
		return out, err
	} else if ok {
		out.Number = int(v)
	}
	attr := ""
	if p.Enabled != nil {
		attr = strings.ToLower(strings.TrimSpace(*p.Enabled))
	}
	out.Enabled = enabled(attr)
	return out, nil
}

func legacyParseXMLStatus(s string) Status {
	return ParseStatus(strings.ToUpper(strings.TrimSpace(s)))
}

// legacyNumberFields are element texts to parse into integers; empty text leaves
// the destination as it is.
type legacyNumberFields []struct {
	text string
	dst  *int64
}

func (f legacyNumberFields) parse() error {
	for _, n := range f {
		v, ok, err := legacyXmlInt(n.text)
		if err != nil {
			return err
		}
		if ok {
			*n.dst = v
		}
	}
	return nil
}

// legacyXmlInt parses numeric element text; empty text is "absent".
func legacyXmlInt(s string) (int64, bool, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, false, nil
	}
	v, err := legacyParseInt(s)
	if err != nil {
		return 0, false, ErrCannotParse
	}
	return v, true, nil
}
