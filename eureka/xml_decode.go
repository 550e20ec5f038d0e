package eureka

import (
	"bytes"
	"encoding/xml"
	"strings"
)

// The XML decoders read an <instance>, <application> or <applications> as
// XStream and fargo write them, as encoding/xml's Unmarshal into the
// decoders' old structs did (the differential fuzz targets hold them to
// it): the root element's name is not checked; child elements match by
// local name, exactly; unknown elements are skipped; an element's text is
// the text directly inside it; a repeated element overrides the earlier
// one, and a repeated <port>, <dataCenterInfo> or <leaseInfo> is merged
// into the earlier one; nothing after the root element is read.
//
// Two readers feed the same builder. xmlScanner reads the documents that
// servers and clients write (elements, attributes, text, the predefined
// entities and character references) straight from the bytes. Anything
// else it meets (comments, CDATA, processing instructions, DOCTYPE, name
// spaces, non-ASCII names, malformed markup) sends the whole document to
// the second reader, which walks encoding/xml's tokens and so has its
// answer for every input, errors included.

// DecodeInstanceXML reads an <instance> document with the same defaults as
// DecodeInstanceJSON. Status text is upper-cased first; empty or unknown
// text is UNKNOWN, except that a missing <status> means UP.
func DecodeInstanceXML(data []byte) (*InstanceInfo, error) {
	d := &xmlDecoder{}
	var w xmlInstance
	if s := (xmlScanner{data: data, d: d}); s.root() && s.instance(&w) {
		return d.finish(&w)
	}
	d.reset()
	w = xmlInstance{}
	t := newXMLTokens(data, d)
	start, ok := t.root()
	if !ok || !t.instance(start, &w) {
		return nil, ErrCannotParse
	}
	return d.finish(&w)
}

// DecodeApplicationsXML reads an <applications> document.
func DecodeApplicationsXML(data []byte) (*Applications, error) {
	d := &xmlDecoder{}
	var w xmlApplications
	if s := (xmlScanner{data: data, d: d}); s.root() && s.applications(&w) {
		return w.result()
	}
	d.reset()
	w = xmlApplications{}
	t := newXMLTokens(data, d)
	start, ok := t.root()
	if !ok || !t.applications(start, &w) {
		return nil, ErrCannotParse
	}
	return w.result()
}

// DecodeApplicationXML reads an <application> document.
func DecodeApplicationXML(data []byte) (*Application, error) {
	d := &xmlDecoder{}
	var w xmlApplication
	if s := (xmlScanner{data: data, d: d}); s.root() && s.application(&w) {
		return w.result()
	}
	d.reset()
	w = xmlApplication{}
	t := newXMLTokens(data, d)
	start, ok := t.root()
	if !ok || !t.application(start, &w) {
		return nil, ErrCannotParse
	}
	return w.result()
}

// xmlDecoder builds documents from what a reader found.
type xmlDecoder struct {
	text  []byte    // the strings of the instance being read
	pairs []xmlPair // the map entries of the instance being read
	tmp   []byte
}

func (d *xmlDecoder) reset() { *d = xmlDecoder{text: d.text[:0], pairs: d.pairs[:0], tmp: d.tmp[:0]} }

type xmlPair struct{ k, v span }

// xmlNum is the text of a numeric element as parsed: absent or blank, a
// number, or not a number (an error only if the text is used).
type xmlNum struct {
	v     int64
	state uint8
}

const (
	numBlank = iota
	numOK
	numBad
)

func parseXMLNum(b []byte) xmlNum {
	if v, ok := quickInt(b); ok {
		return xmlNum{v, numOK}
	}
	v, ok, err := xmlInt(string(b))
	switch {
	case err != nil:
		return xmlNum{state: numBad}
	case ok:
		return xmlNum{v, numOK}
	}
	return xmlNum{}
}

// set stores the number in dst if there is one; false if the text is not a
// number.
func (n xmlNum) set(dst *int64) bool {
	if n.state == numOK {
		*dst = n.v
	}
	return n.state != numBad
}

// xmlMapState is a <metadata> map: pairs[from:to] when present.
type xmlMapState struct {
	present  bool
	from, to int
}

// enabled attribute values, lower-cased and trimmed.
const (
	enabledOther = iota // absent, or neither true nor false
	enabledTrue
	enabledFalse
)

type xmlPort struct {
	present bool
	number  xmlNum
	enabled uint8
}

type xmlDataCenter struct {
	present     bool
	amazonClass bool
	name        span
	metadata    xmlMapState
}

type xmlLease struct {
	present bool
	f       [leaseFields]xmlNum
}

// The <instance> children.
const (
	xInstanceID = iota
	xHostName
	xApp
	xAppGroupName
	xIPAddr
	xSID
	xHomePageURL
	xStatusPageURL
	xHealthCheckURL
	xSecureHealthCheckURL
	xVIPAddress
	xSecureVIPAddress
	xASGName
	xStringFields

	xStatus = iota - 1
	xOverriddenStatusLower
	xOverriddenStatusCamel
	xActionType
	xIsCoordinatingDiscoveryServer
	xCountryID
	xLastUpdatedTimestamp
	xLastDirtyTimestamp
	xTextFields // the fields above are plain text; the ones below are not

	xPort = iota - 2
	xSecurePort
	xDataCenterInfo
	xLeaseInfo
	xMetadata
)

func xmlInstanceFieldOf(name []byte) int {
	switch string(name) {
	case "instanceId":
		return xInstanceID
	case "hostName":
		return xHostName
	case "app":
		return xApp
	case "appGroupName":
		return xAppGroupName
	case "ipAddr":
		return xIPAddr
	case "sid":
		return xSID
	case "homePageUrl":
		return xHomePageURL
	case "statusPageUrl":
		return xStatusPageURL
	case "healthCheckUrl":
		return xHealthCheckURL
	case "secureHealthCheckUrl":
		return xSecureHealthCheckURL
	case "vipAddress":
		return xVIPAddress
	case "secureVipAddress":
		return xSecureVIPAddress
	case "asgName":
		return xASGName
	case "status":
		return xStatus
	case "overriddenstatus":
		return xOverriddenStatusLower
	case "overriddenStatus":
		return xOverriddenStatusCamel
	case "actionType":
		return xActionType
	case "isCoordinatingDiscoveryServer":
		return xIsCoordinatingDiscoveryServer
	case "countryId":
		return xCountryID
	case "lastUpdatedTimestamp":
		return xLastUpdatedTimestamp
	case "lastDirtyTimestamp":
		return xLastDirtyTimestamp
	case "port":
		return xPort
	case "securePort":
		return xSecurePort
	case "dataCenterInfo":
		return xDataCenterInfo
	case "leaseInfo":
		return xLeaseInfo
	case "metadata":
		return xMetadata
	}
	return -1
}

func xmlLeaseFieldOf(name []byte) int {
	switch string(name) {
	case "renewalIntervalInSecs":
		return leaseRenewalInterval
	case "durationInSecs":
		return leaseDuration
	case "registrationTimestamp":
		return leaseRegistration
	case "lastRenewalTimestamp":
		return leaseLastRenewal
	case "renewalTimestamp":
		return leaseRenewal
	case "evictionTimestamp":
		return leaseEviction
	case "serviceUpTimestamp":
		return leaseServiceUp
	}
	return -1
}

// xmlInstance is an <instance> as read.
type xmlInstance struct {
	str                       [xStringFields]span
	hasInstanceID, hasStatus  bool
	status                    Status
	overriddenLower           Status
	overriddenCamel           Status
	action                    ActionType
	coordinating              bool
	countryID, updated, dirty xmlNum
	port, securePort          xmlPort
	dataCenter                xmlDataCenter
	lease                     xmlLease
	metadata                  xmlMapState
}

// setText stores the text of the plain-text field f. For the string
// fields, the text must be at the end of d.text, from start on.
func (d *xmlDecoder) setText(w *xmlInstance, f int, start int) {
	b := d.text[start:]
	if f < xStringFields {
		w.str[f] = span{start, len(d.text)}
		if f == xInstanceID {
			w.hasInstanceID = true
		}
		return
	}
	switch f {
	case xStatus:
		w.hasStatus, w.status = true, parseXMLStatus(b)
	case xOverriddenStatusLower:
		w.overriddenLower = parseXMLStatus(b)
	case xOverriddenStatusCamel:
		w.overriddenCamel = parseXMLStatus(b)
	case xActionType:
		w.action = ParseActionType(string(b))
		if w.action == ActionNone {
			w.action = ParseActionType(strings.TrimSpace(string(b)))
		}
	case xIsCoordinatingDiscoveryServer:
		switch {
		case asciiEqualFold(b, "true"):
			w.coordinating = true
		case asciiEqualFold(b, "false"):
			w.coordinating = false
		default:
			w.coordinating = strings.EqualFold(strings.TrimSpace(string(b)), "true")
		}
	case xCountryID:
		w.countryID = parseXMLNum(b)
	case xLastUpdatedTimestamp:
		w.updated = parseXMLNum(b)
	case xLastDirtyTimestamp:
		w.dirty = parseXMLNum(b)
	}
	d.text = d.text[:start] // only the string fields keep their text
}

// parseXMLStatus upper-cases and trims the text first.
func parseXMLStatus(b []byte) Status {
	if s, ok := LookupStatus(string(b)); ok {
		return s
	}
	return ParseStatus(strings.ToUpper(strings.TrimSpace(string(b))))
}

// enabledOf classifies an enabled attribute.
func enabledOf(b []byte) uint8 {
	switch {
	case string(b) == "true":
		return enabledTrue
	case string(b) == "false":
		return enabledFalse
	}
	switch strings.ToLower(strings.TrimSpace(string(b))) {
	case "true":
		return enabledTrue
	case "false":
		return enabledFalse
	}
	return enabledOther
}

// addPair adds a map entry whose key and value are d.text[kStart:vStart]
// and d.text[vStart:].
func (d *xmlDecoder) addPair(kStart, vStart int) {
	d.pairs = append(d.pairs, xmlPair{span{kStart, vStart}, span{vStart, len(d.text)}})
}

// appendUnescapedName appends a metadata key from its element name,
// reversing EscapeXMLName as UnescapeXMLName does.
func appendUnescapedName(b, name []byte) []byte {
	for i := 0; i < len(name); i++ {
		if name[i] == '_' && i+1 < len(name) {
			switch name[i+1] {
			case '_':
				b = append(b, '_')
				i++
				continue
			case '-':
				b = append(b, '$')
				i++
				continue
			}
		}
		b = append(b, name[i])
	}
	return b
}

// finish turns what was read into an InstanceInfo and starts the next
// instance's text. Numbers that do not parse are ErrCannotParse.
func (d *xmlDecoder) finish(w *xmlInstance) (*InstanceInfo, error) {
	s := string(d.text)
	str := func(f int) string { return s[w.str[f].start:w.str[f].end] }
	i := &InstanceInfo{
		HostName:                      str(xHostName),
		App:                           strings.ToUpper(str(xApp)),
		AppGroupName:                  strings.ToUpper(str(xAppGroupName)),
		IPAddr:                        str(xIPAddr),
		SID:                           str(xSID),
		Status:                        StatusUp,
		OverriddenStatus:              w.overriddenLower,
		Port:                          Port{Number: DefaultPort, Enabled: true},
		SecurePort:                    Port{Number: DefaultSecurePort},
		CountryID:                     1,
		Metadata:                      d.buildMap(s, w.metadata),
		HomePageURL:                   str(xHomePageURL),
		StatusPageURL:                 str(xStatusPageURL),
		HealthCheckURL:                str(xHealthCheckURL),
		SecureHealthCheckURL:          str(xSecureHealthCheckURL),
		VIPAddress:                    str(xVIPAddress),
		SecureVIPAddress:              str(xSecureVIPAddress),
		ActionType:                    w.action,
		ASGName:                       str(xASGName),
		IsCoordinatingDiscoveryServer: w.coordinating,
	}
	if w.hasInstanceID {
		i.InstanceID, i.HasInstanceID = str(xInstanceID), true
	}
	if i.SID == "" {
		i.SID = "na"
	}
	if w.hasStatus {
		i.Status = w.status
	}
	if i.OverriddenStatus == StatusUnknown {
		i.OverriddenStatus = w.overriddenCamel
	}
	// Unsecure ports count as enabled unless the attribute says "false";
	// secure ports only when it says "true" (XStream's converter).
	ok := true
	if p := &w.port; p.present {
		var n int64 = DefaultPort
		ok = p.number.set(&n) && ok
		i.Port = Port{Number: int(n), Enabled: p.enabled != enabledFalse}
	}
	if p := &w.securePort; p.present {
		var n int64 = DefaultSecurePort
		ok = p.number.set(&n) && ok
		i.SecurePort = Port{Number: int(n), Enabled: p.enabled == enabledTrue}
	}
	var country int64 = 1
	ok = w.countryID.set(&country) && w.updated.set(&i.LastUpdatedTimestamp) && w.dirty.set(&i.LastDirtyTimestamp) && ok
	i.CountryID = int(country)
	if l := &w.lease; l.present {
		last := l.f[leaseLastRenewal]
		if last.state == numBlank {
			last = l.f[leaseRenewal]
		}
		var renewal, duration int64
		ok = l.f[leaseRenewalInterval].set(&renewal) && l.f[leaseDuration].set(&duration) &&
			l.f[leaseRegistration].set(&i.LeaseInfo.RegistrationTimestamp) && last.set(&i.LeaseInfo.LastRenewalTimestamp) &&
			l.f[leaseEviction].set(&i.LeaseInfo.EvictionTimestamp) && l.f[leaseServiceUp].set(&i.LeaseInfo.ServiceUpTimestamp) && ok
		i.LeaseInfo.RenewalIntervalInSecs, i.LeaseInfo.DurationInSecs = int(renewal), int(duration)
	}
	if dc := &w.dataCenter; dc.present {
		name := strings.TrimSpace(s[dc.name.start:dc.name.end])
		if isAmazon(dc.amazonClass, name) {
			i.DataCenterInfo = DataCenterInfo{Name: DataCenterAmazon, Metadata: d.buildMap(s, dc.metadata)}
			if i.DataCenterInfo.Metadata == nil {
				i.DataCenterInfo.Metadata = map[string]string{}
			}
		} else {
			i.DataCenterInfo = dataCenter("", name, nil)
		}
	}
	d.text, d.pairs = d.text[:0], d.pairs[:0]
	if !ok {
		return nil, ErrCannotParse
	}
	return i, nil
}

func (d *xmlDecoder) buildMap(s string, m xmlMapState) map[string]string {
	if !m.present {
		return nil
	}
	out := make(map[string]string, m.to-m.from)
	for _, p := range d.pairs[m.from:m.to] {
		out[s[p.k.start:p.k.end]] = s[p.v.start:p.v.end]
	}
	return out
}

// xmlApplications is an <applications> as read. Instances are converted as
// they end; err records that one did not.
type xmlApplications struct {
	version, hashcode string
	apps              []*Application
	err               bool
}

func (w *xmlApplications) result() (*Applications, error) {
	if w.err {
		return nil, ErrCannotParse
	}
	apps := &Applications{VersionsDelta: -1, AppsHashcode: strings.TrimSpace(w.hashcode), Applications: w.apps}
	if v, ok, err := xmlInt(w.version); err != nil {
		return nil, ErrCannotParse
	} else if ok {
		apps.VersionsDelta = v
	}
	return apps, nil
}

type xmlApplication struct {
	name      string
	instances []*InstanceInfo
	err       bool
}

func (w *xmlApplication) result() (*Application, error) {
	if w.err {
		return nil, ErrCannotParse
	}
	return &Application{Name: strings.ToUpper(strings.TrimSpace(w.name)), Instances: w.instances}, nil
}

// addInstance converts an instance that ended.
func (d *xmlDecoder) addInstance(a *xmlApplication, w *xmlInstance) {
	i, err := d.finish(w)
	if err != nil {
		a.err = true
		return
	}
	a.instances = append(a.instances, i)
}

func (a *xmlApplication) resultInto(apps *xmlApplications) {
	out, err := a.result()
	if err != nil {
		apps.err = true
		return
	}
	apps.apps = append(apps.apps, out)
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

// xmlTokens reads a document through encoding/xml's tokenizer, for the
// documents xmlScanner leaves to it. It follows what encoding/xml's
// Unmarshal did with the old structs, step by step.
type xmlTokens struct {
	x *xml.Decoder
	d *xmlDecoder
}

func newXMLTokens(data []byte, d *xmlDecoder) *xmlTokens {
	return &xmlTokens{x: xml.NewDecoder(bytes.NewReader(data)), d: d}
}

// root returns the first start element: whatever comes before it is
// skipped, as Unmarshal skips it.
func (t *xmlTokens) root() (xml.StartElement, bool) {
	for {
		tok, err := t.x.Token()
		if err != nil {
			return xml.StartElement{}, false
		}
		if s, ok := tok.(xml.StartElement); ok {
			return s, true
		}
	}
}

// children calls child for each child element of the element just
// started, until its end. child must consume the element; text and other
// tokens are dropped.
func (t *xmlTokens) children(child func(xml.StartElement) bool) bool {
	for {
		tok, err := t.x.Token()
		if err != nil {
			return false
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			if !child(tok) {
				return false
			}
		case xml.EndElement:
			return true
		}
	}
}

// appendText appends the text directly inside the element just started,
// skipping its child elements, until its end.
func (t *xmlTokens) appendText(b []byte) ([]byte, bool) {
	for {
		tok, err := t.x.Token()
		if err != nil {
			return b, false
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			if t.x.Skip() != nil {
				return b, false
			}
		case xml.CharData:
			b = append(b, tok...)
		case xml.EndElement:
			return b, true
		}
	}
}

func (t *xmlTokens) skip() bool { return t.x.Skip() == nil }

func (t *xmlTokens) applications(_ xml.StartElement, w *xmlApplications) bool {
	return t.children(func(s xml.StartElement) bool {
		var ok bool
		switch s.Name.Local {
		case "versions__delta", "apps__hashcode":
			t.d.tmp, ok = t.appendText(t.d.tmp[:0])
			if s.Name.Local == "versions__delta" {
				w.version = string(t.d.tmp)
			} else {
				w.hashcode = string(t.d.tmp)
			}
		case "application":
			var a xmlApplication
			ok = t.application(s, &a)
			a.resultInto(w)
		default:
			ok = t.skip()
		}
		return ok
	})
}

func (t *xmlTokens) application(_ xml.StartElement, w *xmlApplication) bool {
	return t.children(func(s xml.StartElement) bool {
		var ok bool
		switch s.Name.Local {
		case "name":
			t.d.tmp, ok = t.appendText(t.d.tmp[:0])
			w.name = string(t.d.tmp)
		case "instance":
			var i xmlInstance
			ok = t.instance(s, &i)
			t.d.addInstance(w, &i)
		default:
			ok = t.skip()
		}
		return ok
	})
}

func (t *xmlTokens) instance(_ xml.StartElement, w *xmlInstance) bool {
	d := t.d
	return t.children(func(s xml.StartElement) bool {
		f := xmlInstanceFieldOf([]byte(s.Name.Local))
		var ok bool
		switch {
		case f < 0:
			return t.skip()
		case f < xTextFields:
			start := len(d.text)
			d.text, ok = t.appendText(d.text)
			d.setText(w, f, start)
			return ok
		case f == xPort || f == xSecurePort:
			p := &w.port
			if f == xSecurePort {
				p = &w.securePort
			}
			p.present = true
			for _, a := range s.Attr {
				if a.Name.Local == "enabled" {
					p.enabled = enabledOf([]byte(a.Value))
				}
			}
			d.tmp, ok = t.appendText(d.tmp[:0])
			p.number = parseXMLNum(d.tmp)
			return ok
		case f == xMetadata:
			return t.stringMap(&w.metadata)
		case f == xLeaseInfo:
			w.lease.present = true
			return t.children(func(s xml.StartElement) bool {
				f := xmlLeaseFieldOf([]byte(s.Name.Local))
				if f < 0 {
					return t.skip()
				}
				var ok bool
				d.tmp, ok = t.appendText(d.tmp[:0])
				w.lease.f[f] = parseXMLNum(d.tmp)
				return ok
			})
		default: // xDataCenterInfo
			dc := &w.dataCenter
			dc.present = true
			for _, a := range s.Attr {
				if a.Name.Local == "class" {
					dc.amazonClass = a.Value == AmazonDataCenterClass
				}
			}
			return t.children(func(s xml.StartElement) bool {
				switch s.Name.Local {
				case "name":
					var ok bool
					start := len(d.text)
					d.text, ok = t.appendText(d.text)
					dc.name = span{start, len(d.text)}
					return ok
				case "metadata":
					return t.stringMap(&dc.metadata)
				}
				return t.skip()
			})
		}
	})
}

// stringMap reads a <metadata> map: one child element per key, its name
// unescaped (with its name space, if any, before a colon), its text the
// value.
func (t *xmlTokens) stringMap(m *xmlMapState) bool {
	d := t.d
	from := len(d.pairs)
	ok := t.children(func(s xml.StartElement) bool {
		kStart := len(d.text)
		name := s.Name.Local
		if s.Name.Space != "" {
			name = s.Name.Space + ":" + name
		}
		d.text = append(d.text, UnescapeXMLName(name)...)
		vStart := len(d.text)
		var ok bool
		d.text, ok = t.appendText(d.text)
		d.addPair(kStart, vStart)
		return ok
	})
	*m = xmlMapState{true, from, len(d.pairs)}
	return ok
}
