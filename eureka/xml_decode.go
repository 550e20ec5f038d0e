package eureka

import (
	"bytes"
	"encoding/xml"
	"strings"
)

// xmlInstance is an <instance> as XStream and fargo write it. The root
// element's name is not checked.
type xmlInstance struct {
	InstanceID                    *string        `xml:"instanceId"`
	HostName                      string         `xml:"hostName"`
	App                           string         `xml:"app"`
	AppGroupName                  string         `xml:"appGroupName"`
	IPAddr                        string         `xml:"ipAddr"`
	SID                           string         `xml:"sid"`
	Status                        *string        `xml:"status"`
	OverriddenStatusLower         string         `xml:"overriddenstatus"`
	OverriddenStatusCamel         string         `xml:"overriddenStatus"`
	Port                          *xmlPort       `xml:"port"`
	SecurePort                    *xmlPort       `xml:"securePort"`
	CountryID                     string         `xml:"countryId"`
	DataCenterInfo                *xmlDataCenter `xml:"dataCenterInfo"`
	LeaseInfo                     *xmlLease      `xml:"leaseInfo"`
	Metadata                      xmlMap         `xml:"metadata"`
	HomePageURL                   string         `xml:"homePageUrl"`
	StatusPageURL                 string         `xml:"statusPageUrl"`
	HealthCheckURL                string         `xml:"healthCheckUrl"`
	SecureHealthCheckURL          string         `xml:"secureHealthCheckUrl"`
	VIPAddress                    string         `xml:"vipAddress"`
	SecureVIPAddress              string         `xml:"secureVipAddress"`
	IsCoordinatingDiscoveryServer string         `xml:"isCoordinatingDiscoveryServer"`
	LastUpdatedTimestamp          string         `xml:"lastUpdatedTimestamp"`
	LastDirtyTimestamp            string         `xml:"lastDirtyTimestamp"`
	ActionType                    string         `xml:"actionType"`
	ASGName                       string         `xml:"asgName"`
}

type xmlPort struct {
	Enabled *string `xml:"enabled,attr"`
	Number  string  `xml:",chardata"`
}

type xmlDataCenter struct {
	Class    string `xml:"class,attr"`
	Name     string `xml:"name"`
	Metadata xmlMap `xml:"metadata"`
}

type xmlLease struct {
	RenewalIntervalInSecs string `xml:"renewalIntervalInSecs"`
	DurationInSecs        string `xml:"durationInSecs"`
	RegistrationTimestamp string `xml:"registrationTimestamp"`
	LastRenewalTimestamp  string `xml:"lastRenewalTimestamp"`
	RenewalTimestamp      string `xml:"renewalTimestamp"`
	EvictionTimestamp     string `xml:"evictionTimestamp"`
	ServiceUpTimestamp    string `xml:"serviceUpTimestamp"`
}

// xmlMap reads one child element per key, unescaping XStream's element
// names. The "class" attribute (the EmptyMap marker) is ignored.
type xmlMap map[string]string

func (m *xmlMap) UnmarshalXML(d *xml.Decoder, start xml.StartElement) error {
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
			out[UnescapeXMLName(xmlName(t.Name))] = text
		case xml.EndElement:
			*m = out
			return nil
		}
	}
}

func xmlName(n xml.Name) string {
	if n.Space != "" {
		return n.Space + ":" + n.Local
	}
	return n.Local
}

// DecodeInstanceXML reads an <instance> document with the same defaults as
// DecodeInstanceJSON. Status text is upper-cased first; empty or unknown
// text is UNKNOWN, except that a missing <status> means UP.
func DecodeInstanceXML(data []byte) (*InstanceInfo, error) {
	var w xmlInstance
	if err := xml.NewDecoder(bytes.NewReader(data)).Decode(&w); err != nil {
		return nil, ErrCannotParse
	}
	return w.instance()
}

// DecodeApplicationsXML reads an <applications> document.
func DecodeApplicationsXML(data []byte) (*Applications, error) {
	var w struct {
		VersionsDelta string           `xml:"versions__delta"`
		AppsHashcode  string           `xml:"apps__hashcode"`
		Application   []xmlApplication `xml:"application"`
	}
	if err := xml.NewDecoder(bytes.NewReader(data)).Decode(&w); err != nil {
		return nil, ErrCannotParse
	}
	apps := &Applications{VersionsDelta: -1, AppsHashcode: strings.TrimSpace(w.AppsHashcode)}
	if v, ok, err := xmlInt(w.VersionsDelta); err != nil {
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

// DecodeApplicationXML reads an <application> document.
func DecodeApplicationXML(data []byte) (*Application, error) {
	var w xmlApplication
	if err := xml.NewDecoder(bytes.NewReader(data)).Decode(&w); err != nil {
		return nil, ErrCannotParse
	}
	return w.application()
}

type xmlApplication struct {
	Name     string        `xml:"name"`
	Instance []xmlInstance `xml:"instance"`
}

func (w *xmlApplication) application() (*Application, error) {
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

func (w *xmlInstance) instance() (*InstanceInfo, error) {
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
		i.Status = parseXMLStatus(*w.Status)
	}
	i.OverriddenStatus = parseXMLStatus(w.OverriddenStatusLower)
	if i.OverriddenStatus == StatusUnknown {
		i.OverriddenStatus = parseXMLStatus(w.OverriddenStatusCamel)
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
	ints := numberFields{
		{w.LastUpdatedTimestamp, &i.LastUpdatedTimestamp},
		{w.LastDirtyTimestamp, &i.LastDirtyTimestamp},
		{w.CountryID, &country},
	}
	if l := w.LeaseInfo; l != nil {
		if strings.TrimSpace(l.LastRenewalTimestamp) == "" {
			l.LastRenewalTimestamp = l.RenewalTimestamp
		}
		ints = append(ints, numberFields{
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
		i.DataCenterInfo = dataCenter(dc.Class, strings.TrimSpace(dc.Name), dc.Metadata)
	}
	return i, nil
}

func (p *xmlPort) port(defaultNumber int, enabled func(attr string) bool) (Port, error) {
	out := Port{Number: defaultNumber}
	if v, ok, err := xmlInt(p.Number); err != nil {
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

func parseXMLStatus(s string) Status {
	return ParseStatus(strings.ToUpper(strings.TrimSpace(s)))
}

// numberFields are element texts to parse into integers; empty text leaves
// the destination as it is.
type numberFields []struct {
	text string
	dst  *int64
}

func (f numberFields) parse() error {
	for _, n := range f {
		v, ok, err := xmlInt(n.text)
		if err != nil {
			return err
		}
		if ok {
			*n.dst = v
		}
	}
	return nil
}

// xmlInt parses numeric element text; empty text is "absent".
func xmlInt(s string) (int64, bool, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, false, nil
	}
	v, err := parseInt(s)
	if err != nil {
		return 0, false, ErrCannotParse
	}
	return v, true, nil
}
