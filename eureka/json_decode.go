package eureka

import (
	"bytes"
	"errors"
	"strings"
)

// ErrCannotParse is returned for a body that is not a readable document. The
// server answers it with 400 "cannot parse request body", as Eureka does.
var ErrCannotParse = errors.New("cannot parse request body")

// The JSON decoders read every InstanceInfo dialect the clients send, in one
// pass over the document with jsonScanner and without reflection. What they
// accept, and what they make of it, is what the encoding/json decoders they
// replace did (the differential fuzz targets hold them to it):
//
//   - keys match field names exactly or else case-insensitively, so
//     "overriddenStatus" also reads fargo's "overriddenstatus"; unknown keys
//     are skipped, whatever their value;
//   - null means absent (in a list, an empty element); a repeated key
//     overrides the earlier one, and a repeated object (leaseInfo,
//     dataCenterInfo, the "instance" wrapper) is merged into the earlier one;
//   - strings take strings, numbers and booleans (kept as their text); ints
//     take numbers and numeric strings ("" is absent); booleans take
//     booleans and the strings "true"/"false" in any case ("" is false);
//   - a list ("application", "instance") may be a single object;
//   - port is {"$":8080,"@enabled":"true"} in any of these dialects, or a
//     bare number or numeric string.
//
// The strings of one instance share one allocation.

// DecodeInstanceJSON reads an InstanceInfo from {"instance":{...}} or from
// a bare InstanceInfo object. Defaults follow the Java server's builder:
// status UP, ports 7001 (enabled) and 7002 (disabled), countryId 1, sid
// "na". A missing lastDirtyTimestamp is left 0 for the caller to fill in.
func DecodeInstanceJSON(data []byte) (*InstanceInfo, error) {
	d := newJSONDecoder(data)
	i, ok := d.instanceDocument()
	if !ok || !d.atEnd() {
		return nil, ErrCannotParse
	}
	return i, nil
}

// instanceDocument reads the value at pos as DecodeInstanceJSON reads a
// document: {"instance":{...}}, a bare InstanceInfo object, or null (an
// instance with every default).
func (d *jsonDecoder) instanceDocument() (*InstanceInfo, bool) {
	var outer, inner jsonInstance
	wrapped := false
	switch c := d.ws(); c {
	case '{':
		if !d.enter() {
			return nil, false
		}
		more, ok := d.first('}'), true
		for more {
			var key []byte
			if key, ok = d.member(); !ok {
				return nil, false
			}
			f := instanceFieldOf(key)
			if f < 0 && foldEqual(key, "instance") {
				switch d.ws() {
				case '{':
					if !wrapped {
						inner, wrapped = jsonInstance{}, true
					}
					ok = d.instance(&inner)
				case 'n':
					inner, wrapped = jsonInstance{}, false
					ok = d.null()
				default:
					ok = false
				}
			} else {
				ok = d.instanceField(&outer, f)
			}
			if !ok {
				return nil, false
			}
			more, ok = d.next('}')
		}
		if !ok {
			return nil, false
		}
	case 'n':
		if !d.null() {
			return nil, false
		}
	default:
		return nil, false
	}
	if wrapped {
		return d.finish(&inner), true
	}
	return d.finish(&outer), true
}

// DecodeApplicationsJSON reads an {"applications":{...}} document: a full
// registry, a delta or a VIP result. "application" and "instance" may be
// arrays or single objects; versions__delta may be a number or a string.
func DecodeApplicationsJSON(data []byte) (*Applications, error) {
	d := newJSONDecoder(data)
	var w jsonApplications
	present := false
	ok := d.wrapper("applications", func() bool {
		if !present {
			w, present = jsonApplications{}, true
		}
		return d.applications(&w)
	}, func() { w, present = jsonApplications{}, false })
	if !ok || !present {
		return nil, ErrCannotParse
	}
	apps := &Applications{VersionsDelta: -1, AppsHashcode: w.hashcode, Applications: w.apps}
	if w.version.set {
		apps.VersionsDelta = w.version.v
	}
	return apps, nil
}

// DecodeApplicationJSON reads an {"application":{...}} document.
func DecodeApplicationJSON(data []byte) (*Application, error) {
	d := newJSONDecoder(data)
	var w jsonApplication
	present := false
	ok := d.wrapper("application", func() bool {
		if !present {
			w, present = jsonApplication{}, true
		}
		return d.application(&w)
	}, func() { w, present = jsonApplication{}, false })
	if !ok || !present {
		return nil, ErrCannotParse
	}
	return w.result(), nil
}

// jsonDecoder builds documents from a jsonScanner.
type jsonDecoder struct {
	jsonScanner
	text  []byte     // the strings of the instance being read
	pairs []jsonPair // the map entries of the instance being read
	tmp   []byte     // unquoted values
}

func newJSONDecoder(data []byte) *jsonDecoder {
	return &jsonDecoder{jsonScanner: jsonScanner{data: data}}
}

// span is text[start:end].
type span struct{ start, end int }

// jsonString is a string field; set is false when absent or null.
type jsonString struct {
	span
	set bool
}

type jsonInt struct {
	v   int64
	set bool
}

type jsonBool struct{ v, set bool }

// jsonMap is a string map: pairs[from:to] when present (not null).
type jsonMap struct {
	present  bool
	from, to int
}

// jsonPair is one map entry; del means the entry is removed (null, or the
// Java EmptyMap marker).
type jsonPair struct {
	k, v span
	del  bool
}

type jsonPort struct {
	present bool
	number  jsonInt
	enabled jsonBool
}

type jsonDataCenter struct {
	present     bool
	amazonClass bool // "@class" is AmazonInfo's
	name        jsonString
	metadata    jsonMap
}

// The leaseInfo fields, renewalTimestamp being the legacy alias of
// lastRenewalTimestamp.
const (
	leaseRenewalInterval = iota
	leaseDuration
	leaseRegistration
	leaseLastRenewal
	leaseRenewal
	leaseEviction
	leaseServiceUp
	leaseFields
)

var leaseFieldNames = [leaseFields]string{"renewalIntervalInSecs", "durationInSecs",
	"registrationTimestamp", "lastRenewalTimestamp", "renewalTimestamp", "evictionTimestamp", "serviceUpTimestamp"}

type jsonLease struct {
	present bool
	f       [leaseFields]jsonInt
}

// The InstanceInfo fields. The first ones are plain strings.
const (
	fInstanceID = iota
	fHostName
	fApp
	fAppGroupName
	fIPAddr
	fSID
	fHomePageURL
	fStatusPageURL
	fHealthCheckURL
	fSecureHealthCheckURL
	fVIPAddress
	fSecureVIPAddress
	fASGName
	stringFields

	fStatus = iota - 1
	fOverriddenStatus
	fActionType
	fPort
	fSecurePort
	fCountryID
	fDataCenterInfo
	fLeaseInfo
	fMetadata
	fIsCoordinatingDiscoveryServer
	fLastUpdatedTimestamp
	fLastDirtyTimestamp
	instanceFields
)

var instanceFieldNames = [instanceFields]string{"instanceId", "hostName", "app", "appGroupName", "ipAddr", "sid",
	"homePageUrl", "statusPageUrl", "healthCheckUrl", "secureHealthCheckUrl", "vipAddress", "secureVipAddress", "asgName",
	"status", "overriddenStatus", "actionType", "port", "securePort", "countryId", "dataCenterInfo", "leaseInfo",
	"metadata", "isCoordinatingDiscoveryServer", "lastUpdatedTimestamp", "lastDirtyTimestamp"}

// instanceFieldOf returns the field a key names, or -1.
func instanceFieldOf(key []byte) int {
	switch string(key) {
	case "instanceId":
		return fInstanceID
	case "hostName":
		return fHostName
	case "app":
		return fApp
	case "appGroupName":
		return fAppGroupName
	case "ipAddr":
		return fIPAddr
	case "sid":
		return fSID
	case "homePageUrl":
		return fHomePageURL
	case "statusPageUrl":
		return fStatusPageURL
	case "healthCheckUrl":
		return fHealthCheckURL
	case "secureHealthCheckUrl":
		return fSecureHealthCheckURL
	case "vipAddress":
		return fVIPAddress
	case "secureVipAddress":
		return fSecureVIPAddress
	case "asgName":
		return fASGName
	case "status":
		return fStatus
	case "overriddenStatus":
		return fOverriddenStatus
	case "actionType":
		return fActionType
	case "port":
		return fPort
	case "securePort":
		return fSecurePort
	case "countryId":
		return fCountryID
	case "dataCenterInfo":
		return fDataCenterInfo
	case "leaseInfo":
		return fLeaseInfo
	case "metadata":
		return fMetadata
	case "isCoordinatingDiscoveryServer":
		return fIsCoordinatingDiscoveryServer
	case "lastUpdatedTimestamp":
		return fLastUpdatedTimestamp
	case "lastDirtyTimestamp":
		return fLastDirtyTimestamp
	}
	return foldIndex(key, instanceFieldNames[:])
}

// foldIndex returns the index of the name that key folds to, or -1.
func foldIndex(key []byte, names []string) int {
	for n, name := range names {
		if foldEqual(key, name) {
			return n
		}
	}
	return -1
}

// jsonInstance is an InstanceInfo as read: what each field held.
type jsonInstance struct {
	str              [stringFields]jsonString
	hasStatus        bool
	status           Status
	overridden       Status
	action           ActionType
	port, securePort jsonPort
	countryID        jsonInt
	lastUpdated      jsonInt
	lastDirty        jsonInt
	coordinating     jsonBool
	dataCenter       jsonDataCenter
	lease            jsonLease
	metadata         jsonMap
}

// instance reads an InstanceInfo object (pos at '{') into w.
func (d *jsonDecoder) instance(w *jsonInstance) bool {
	if !d.enter() {
		return false
	}
	more, ok := d.first('}'), true
	expect := 0
	for more {
		// Servers write the keys in one order: try the one that comes
		// next in it before reading the key.
		f := instanceKeyOrder[expect]
		if k := instanceKeys[f]; !bytes.HasPrefix(d.data[d.pos:], k) {
			var key []byte
			if key, ok = d.member(); !ok {
				return false
			}
			f = instanceFieldOf(key)
		} else {
			d.pos += len(k)
		}
		if f >= 0 {
			expect = instanceKeyNext[f]
		}
		if !d.instanceField(w, f) {
			return false
		}
		more, ok = d.next('}')
	}
	return ok
}

// instanceKeyOrder is the order of the keys in what Java servers and this
// package write; instanceKeys are the keys quoted, with their colon, and
// instanceKeyNext is the position in the order after each field's.
var (
	instanceKeyOrder = [...]int{fInstanceID, fHostName, fApp, fIPAddr, fSID, fStatus, fOverriddenStatus,
		fPort, fSecurePort, fCountryID, fDataCenterInfo, fLeaseInfo, fMetadata, fAppGroupName, fHomePageURL,
		fStatusPageURL, fHealthCheckURL, fSecureHealthCheckURL, fVIPAddress, fSecureVIPAddress,
		fIsCoordinatingDiscoveryServer, fLastUpdatedTimestamp, fLastDirtyTimestamp, fActionType, fASGName}
	instanceKeys    [instanceFields][]byte
	instanceKeyNext [instanceFields]int
)

var (
	leaseKeyOrder = [...]int{leaseRenewalInterval, leaseDuration, leaseRegistration, leaseLastRenewal,
		leaseEviction, leaseServiceUp, leaseRenewal}
	leaseKeys    [leaseFields][]byte
	leaseKeyNext [leaseFields]int
)

func init() {
	for n, f := range leaseKeyOrder {
		leaseKeys[f] = []byte(`"` + leaseFieldNames[f] + `":`)
		leaseKeyNext[f] = (n + 1) % len(leaseKeyOrder)
	}
	for n, f := range instanceKeyOrder {
		instanceKeys[f] = []byte(`"` + instanceFieldNames[f] + `":`)
		instanceKeyNext[f] = (n + 1) % len(instanceKeyOrder)
	}
}

// instanceField reads the value of field f into w.
func (d *jsonDecoder) instanceField(w *jsonInstance, f int) bool {
	switch {
	case f < 0:
		return d.skip()
	case f < stringFields:
		return d.string(&w.str[f])
	}
	switch f {
	case fStatus, fOverriddenStatus, fActionType:
		b, set, ok := d.value()
		if !ok {
			return false
		}
		switch f {
		case fStatus:
			w.hasStatus, w.status = set, ParseStatus(string(b))
		case fOverriddenStatus:
			w.overridden = ParseStatus(string(b))
		default:
			w.action = ParseActionType(string(b))
		}
		return true
	case fPort:
		return d.port(&w.port)
	case fSecurePort:
		return d.port(&w.securePort)
	case fCountryID:
		return d.int(&w.countryID)
	case fLastUpdatedTimestamp:
		return d.int(&w.lastUpdated)
	case fLastDirtyTimestamp:
		return d.int(&w.lastDirty)
	case fIsCoordinatingDiscoveryServer:
		return d.bool(&w.coordinating)
	case fMetadata:
		return d.stringMap(&w.metadata)
	case fDataCenterInfo:
		return d.dataCenter(&w.dataCenter)
	default: // fLeaseInfo
		return d.lease(&w.lease)
	}
}

// null reads the literal null (pos at 'n').
func (d *jsonDecoder) null() bool {
	b, ok := d.literal()
	return ok && b[0] == 'n'
}

// value reads a scalar as a string field takes it: a string unquoted, a
// number or boolean as its text. set is false for null; objects and arrays
// are errors. The text is valid until the next read.
func (d *jsonDecoder) value() (b []byte, set, ok bool) {
	switch c := d.ws(); c {
	case '"':
		content, plain, ok := d.str()
		if !ok {
			return nil, false, false
		}
		if !plain {
			d.tmp = appendUnquoted(d.tmp[:0], content)
			content = d.tmp
		}
		return content, true, true
	case '{', '[', 0:
		return nil, false, false
	default:
		b, ok := d.scalar(c)
		if !ok {
			return nil, false, false
		}
		if b[0] == 'n' {
			return nil, false, true
		}
		return b, true, true
	}
}

// string reads a string field into the instance's text.
func (d *jsonDecoder) string(dst *jsonString) bool {
	b, set, ok := d.value()
	if !ok {
		return false
	}
	if !set {
		*dst = jsonString{}
		return true
	}
	start := len(d.text)
	d.text = append(d.text, b...)
	*dst = jsonString{span{start, len(d.text)}, true}
	return true
}

// int reads a number or a numeric string.
func (d *jsonDecoder) int(dst *jsonInt) bool {
	if v, ok := d.quickInt(); ok {
		*dst = jsonInt{v, true}
		return true
	}
	switch c := d.ws(); c {
	case '"':
		content, plain, ok := d.str()
		if !ok {
			return false
		}
		if v, ok := quickInt(content); ok {
			*dst = jsonInt{v, true}
			return true
		}
		if !plain {
			d.tmp = appendUnquoted(d.tmp[:0], content)
			content = d.tmp
		}
		s := strings.TrimSpace(string(content))
		if s == "" {
			*dst = jsonInt{}
			return true
		}
		v, err := parseInt(s)
		*dst = jsonInt{v, true}
		return err == nil
	case '{', '[', 0:
		return false
	default:
		b, ok := d.scalar(c)
		if !ok {
			return false
		}
		if b[0] == 'n' {
			*dst = jsonInt{}
			return true
		}
		v, ok := quickInt(b)
		if !ok {
			var err error
			v, err = parseInt(string(b))
			ok = err == nil
		}
		*dst = jsonInt{v, true}
		return ok
	}
}

// bool reads a boolean or one of the strings "true" and "false" (any case;
// "" is false).
func (d *jsonDecoder) bool(dst *jsonBool) bool {
	c := d.ws()
	if c == '{' || c == '[' || c == 0 {
		return false
	}
	b, ok := d.scalar(c)
	if !ok {
		return false
	}
	if c == '"' {
		b = b[1 : len(b)-1] // the raw content: an escape is never true or false
	} else if b[0] == 'n' {
		*dst = jsonBool{}
		return true
	}
	switch {
	case asciiEqualFold(b, "true"):
		*dst = jsonBool{true, true}
	case asciiEqualFold(b, "false") || len(b) == 0:
		*dst = jsonBool{false, true}
	default:
		return false
	}
	return true
}

// stringMap reads an object of scalars.
func (d *jsonDecoder) stringMap(m *jsonMap) bool {
	switch d.ws() {
	case 'n':
		*m = jsonMap{}
		return d.null()
	case '{':
	default:
		return false
	}
	if !d.enter() {
		return false
	}
	from := len(d.pairs)
	more, ok := d.first('}'), true
	for more {
		var key []byte
		key, ok = d.member()
		if !ok {
			return false
		}
		var p jsonPair
		p.k.start = len(d.text)
		d.text = append(d.text, key...)
		p.k.end = len(d.text)
		b, set, ok := d.value()
		if !ok {
			return false
		}
		switch {
		case !set || (string(key) == "@class" && strings.HasSuffix(string(b), "EmptyMap")):
			// Java's marker for an empty map, dropped as null is.
			p.del = true
		default:
			p.v.start = len(d.text)
			d.text = append(d.text, b...)
			p.v.end = len(d.text)
		}
		d.pairs = append(d.pairs, p)
		more, ok = d.next('}')
	}
	*m = jsonMap{true, from, len(d.pairs)}
	return ok
}

// port reads a port object, or a bare number or numeric string.
func (d *jsonDecoder) port(p *jsonPort) bool {
	switch d.ws() {
	case 'n':
		*p = jsonPort{}
		return d.null()
	case '[':
		return false
	case '{':
	default:
		p.present = true
		return d.int(&p.number)
	}
	if !d.enter() {
		return false
	}
	var obj jsonPort
	more, ok := d.first('}'), true
	for more {
		var key []byte
		switch {
		case d.knownKey(keyDollar):
			key = keyDollar[1:2]
		case d.knownKey(keyEnabled):
			key = keyEnabled[1:9]
		default:
			if key, ok = d.member(); !ok {
				return false
			}
		}
		switch {
		case string(key) == "$":
			ok = d.int(&obj.number)
		case foldEqual(key, "@enabled"):
			ok = d.bool(&obj.enabled)
		default:
			ok = d.skip()
		}
		if !ok {
			return false
		}
		more, ok = d.next('}')
	}
	obj.present = true
	*p = obj
	return ok
}

// dataCenter reads a dataCenterInfo object, merged into an earlier one.
func (d *jsonDecoder) dataCenter(dc *jsonDataCenter) bool {
	switch d.ws() {
	case 'n':
		*dc = jsonDataCenter{}
		return d.null()
	case '{':
	default:
		return false
	}
	if !d.enter() {
		return false
	}
	dc.present = true
	more, ok := d.first('}'), true
	for more {
		var key []byte
		switch {
		case d.knownKey(keyClass):
			key = keyClass[1:7]
		case d.knownKey(keyName):
			key = keyName[1:5]
		default:
			if key, ok = d.member(); !ok {
				return false
			}
		}
		switch {
		case foldEqual(key, "name"):
			ok = d.string(&dc.name)
		case foldEqual(key, "@class"):
			var b []byte
			b, _, ok = d.value()
			dc.amazonClass = string(b) == AmazonDataCenterClass
		case foldEqual(key, "metadata"):
			ok = d.stringMap(&dc.metadata)
		default:
			ok = d.skip()
		}
		if !ok {
			return false
		}
		more, ok = d.next('}')
	}
	return ok
}

// lease reads a leaseInfo object, merged into an earlier one.
func (d *jsonDecoder) lease(l *jsonLease) bool {
	switch d.ws() {
	case 'n':
		*l = jsonLease{}
		return d.null()
	case '{':
	default:
		return false
	}
	if !d.enter() {
		return false
	}
	l.present = true
	more, ok := d.first('}'), true
	expect := 0
	for more {
		f := leaseKeyOrder[expect]
		if k := leaseKeys[f]; bytes.HasPrefix(d.data[d.pos:], k) {
			d.pos += len(k)
		} else {
			var key []byte
			if key, ok = d.member(); !ok {
				return false
			}
			f = leaseFieldOf(key)
		}
		if f >= 0 {
			expect = leaseKeyNext[f]
			ok = d.int(&l.f[f])
		} else {
			ok = d.skip()
		}
		if !ok {
			return false
		}
		more, ok = d.next('}')
	}
	return ok
}

// Keys that servers write, quoted and with their colon, for knownKey.
var (
	keyDollar  = []byte(`"$":`)
	keyEnabled = []byte(`"@enabled":`)
	keyClass   = []byte(`"@class":`)
	keyName    = []byte(`"name":`)
)

// knownKey reads the key k (quoted, with its colon) if it comes next, as
// servers write it.
func (d *jsonDecoder) knownKey(k []byte) bool {
	if bytes.HasPrefix(d.data[d.pos:], k) {
		d.pos += len(k)
		return true
	}
	return false
}

func leaseFieldOf(key []byte) int {
	switch string(key) {
	case "renewalIntervalInSecs":
		return leaseRenewalInterval
	case "durationInSecs":
		return leaseDuration
	case "registrationTimestamp":
		return leaseRegistration
	case "lastRenewalTimestamp":
		return leaseLastRenewal
	case "evictionTimestamp":
		return leaseEviction
	case "serviceUpTimestamp":
		return leaseServiceUp
	}
	return foldIndex(key, leaseFieldNames[:])
}

// finish turns what was read into an InstanceInfo, with the Java server's
// defaults, and starts the next instance's text.
func (d *jsonDecoder) finish(w *jsonInstance) *InstanceInfo {
	s := string(d.text)
	str := func(f int) string { return s[w.str[f].start:w.str[f].end] }
	i := &InstanceInfo{
		InstanceID:                    str(fInstanceID),
		HasInstanceID:                 w.str[fInstanceID].set,
		HostName:                      str(fHostName),
		App:                           strings.ToUpper(str(fApp)),
		AppGroupName:                  strings.ToUpper(str(fAppGroupName)),
		IPAddr:                        str(fIPAddr),
		SID:                           str(fSID),
		Status:                        StatusUp,
		OverriddenStatus:              w.overridden,
		Port:                          w.port.result(DefaultPort, true),
		SecurePort:                    w.securePort.result(DefaultSecurePort, false),
		CountryID:                     1,
		HomePageURL:                   str(fHomePageURL),
		StatusPageURL:                 str(fStatusPageURL),
		HealthCheckURL:                str(fHealthCheckURL),
		SecureHealthCheckURL:          str(fSecureHealthCheckURL),
		VIPAddress:                    str(fVIPAddress),
		SecureVIPAddress:              str(fSecureVIPAddress),
		IsCoordinatingDiscoveryServer: w.coordinating.v,
		LastUpdatedTimestamp:          w.lastUpdated.v,
		LastDirtyTimestamp:            w.lastDirty.v,
		ActionType:                    w.action,
		ASGName:                       str(fASGName),
	}
	if i.SID == "" {
		i.SID = "na"
	}
	if w.hasStatus {
		i.Status = w.status
	}
	if w.countryID.set {
		i.CountryID = int(w.countryID.v)
	}
	i.Metadata = d.buildMap(s, w.metadata)
	if dc := &w.dataCenter; dc.present {
		name := s[dc.name.start:dc.name.end]
		if isAmazon(dc.amazonClass, name) {
			i.DataCenterInfo = DataCenterInfo{Name: DataCenterAmazon, Metadata: d.buildMap(s, dc.metadata)}
			if i.DataCenterInfo.Metadata == nil {
				i.DataCenterInfo.Metadata = map[string]string{}
			}
		} else {
			i.DataCenterInfo = dataCenter("", name, nil)
		}
	}
	if l := &w.lease; l.present {
		i.LeaseInfo = LeaseInfo{
			RenewalIntervalInSecs: int(l.f[leaseRenewalInterval].v),
			DurationInSecs:        int(l.f[leaseDuration].v),
			RegistrationTimestamp: l.f[leaseRegistration].v,
			LastRenewalTimestamp:  l.f[leaseLastRenewal].v,
			EvictionTimestamp:     l.f[leaseEviction].v,
			ServiceUpTimestamp:    l.f[leaseServiceUp].v,
		}
		if !l.f[leaseLastRenewal].set {
			i.LeaseInfo.LastRenewalTimestamp = l.f[leaseRenewal].v
		}
	}
	d.text, d.pairs = d.text[:0], d.pairs[:0]
	return i
}

func (p *jsonPort) result(defaultNumber int, defaultEnabled bool) Port {
	out := Port{Number: defaultNumber, Enabled: defaultEnabled}
	if !p.present {
		return out
	}
	if p.number.set {
		out.Number = int(p.number.v)
	}
	if p.enabled.set {
		out.Enabled = p.enabled.v
	}
	return out
}

// buildMap makes the map that m read, or nil when it was absent or null.
func (d *jsonDecoder) buildMap(s string, m jsonMap) map[string]string {
	if !m.present {
		return nil
	}
	out := make(map[string]string, m.to-m.from)
	for _, p := range d.pairs[m.from:m.to] {
		if p.del {
			delete(out, s[p.k.start:p.k.end])
		} else {
			out[s[p.k.start:p.k.end]] = s[p.v.start:p.v.end]
		}
	}
	return out
}

// isAmazon tells an Amazon data center from its class and name, as
// dataCenter does.
func isAmazon(amazonClass bool, name string) bool {
	return strings.EqualFold(name, DataCenterAmazon) || (name == "" && amazonClass)
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

// jsonApplications is an applications object as read.
type jsonApplications struct {
	version  jsonInt
	hashcode string
	apps     []*Application
}

// jsonApplication is an application object as read.
type jsonApplication struct {
	name      string
	instances []*InstanceInfo
}

func (w *jsonApplication) result() *Application {
	return &Application{Name: strings.ToUpper(w.name), Instances: w.instances}
}

// wrapper reads a document {"<name>": {...}}: body reads the object,
// null is called for a null value.
func (d *jsonDecoder) wrapper(name string, body func() bool, null func()) bool {
	if d.ws() != '{' || !d.enter() {
		return false
	}
	more, ok := d.first('}'), true
	for more {
		var key []byte
		key, ok = d.member()
		if !ok {
			return false
		}
		if foldEqual(key, name) {
			switch d.ws() {
			case '{':
				ok = body()
			case 'n':
				null()
				ok = d.null()
			default:
				ok = false
			}
		} else {
			ok = d.skip()
		}
		if !ok {
			return false
		}
		more, ok = d.next('}')
	}
	return ok && d.atEnd()
}

// applications reads an applications object (pos at '{') into w.
func (d *jsonDecoder) applications(w *jsonApplications) bool {
	if !d.enter() {
		return false
	}
	more, ok := d.first('}'), true
	for more {
		var key []byte
		key, ok = d.member()
		if !ok {
			return false
		}
		switch {
		case foldEqual(key, "versions__delta"):
			ok = d.int(&w.version)
		case foldEqual(key, "apps__hashcode"):
			var b []byte
			b, _, ok = d.value()
			w.hashcode = string(b)
		case foldEqual(key, "application"):
			ok = d.list(func(null bool) bool {
				var a jsonApplication
				if !null && !d.application(&a) {
					return false
				}
				w.apps = append(w.apps, a.result())
				return true
			}, func() { w.apps = nil })
		default:
			ok = d.skip()
		}
		if !ok {
			return false
		}
		more, ok = d.next('}')
	}
	return ok
}

// application reads an application object (pos at '{') into w.
func (d *jsonDecoder) application(w *jsonApplication) bool {
	if !d.enter() {
		return false
	}
	more, ok := d.first('}'), true
	for more {
		var key []byte
		key, ok = d.member()
		if !ok {
			return false
		}
		switch {
		case foldEqual(key, "name"):
			var b []byte
			b, _, ok = d.value()
			w.name = string(b)
		case foldEqual(key, "instance"):
			ok = d.list(func(null bool) bool {
				var i jsonInstance
				if !null && !d.instance(&i) {
					return false
				}
				w.instances = append(w.instances, d.finish(&i))
				return true
			}, func() { w.instances = nil })
		default:
			ok = d.skip()
		}
		if !ok {
			return false
		}
		more, ok = d.next('}')
	}
	return ok
}

// list reads an array of objects or a single object, calling elem for
// each (with null true for a null element, which stands for an empty
// object). reset is called first: a repeated key replaces the list.
func (d *jsonDecoder) list(elem func(null bool) bool, reset func()) bool {
	reset()
	switch d.ws() {
	case 'n':
		return d.null()
	case '{':
		return elem(false)
	case '[':
	default:
		return false
	}
	if !d.enter() {
		return false
	}
	more, ok := d.first(']'), true
	for more {
		switch d.ws() {
		case '{':
			ok = elem(false)
		case 'n':
			ok = d.null() && elem(true)
		default:
			ok = false
		}
		if !ok {
			return false
		}
		more, ok = d.next(']')
	}
	return ok
}

// quickInt reads the common forms of an int without a detour: up to 18
// digits, bare or quoted, not starting with a 0 unless alone. ok is false,
// having read nothing, for anything else.
func (d *jsonDecoder) quickInt() (int64, bool) {
	data, i := d.data, d.pos
	quoted := i < len(data) && data[i] == '"'
	if quoted {
		i++
	}
	start := i
	var v int64
	for ; i < len(data) && i-start < 18; i++ {
		c := data[i]
		if c < '0' || c > '9' {
			break
		}
		v = v*10 + int64(c-'0')
	}
	n := i - start
	if n == 0 || n > 1 && data[start] == '0' || i >= len(data) {
		return 0, false
	}
	if quoted {
		if data[i] != '"' {
			return 0, false
		}
		i++
	} else if c := data[i]; '0' <= c && c <= '9' || c == '.' || c == 'e' || c == 'E' {
		return 0, false
	}
	d.pos = i
	return v, true
}
