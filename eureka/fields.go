package eureka

import (
	"unicode"
	"unicode/utf8"
)

// The fields of every object the decoders read, named once for both
// formats: a number per field, its name (the JSON key and the XML element
// are the same), and the order in which servers write the fields. A reader
// tries the names that come next in that order (see fieldOrder.predict)
// before it reads and looks up a name: for documents written by a server
// that is nearly always right, and saves the lookup.

// The InstanceInfo fields: the plain strings first, then those whose value
// is one scalar (in XML, one element's text), then the objects.
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
	// XStream's and fargo's spelling. JSON reads either spelling into the
	// one override, as Go's case-insensitive keys did; XML keeps the two
	// apart, as its old struct did.
	fOverriddenStatusLower
	fActionType
	fIsCoordinatingDiscoveryServer
	fCountryID
	fLastUpdatedTimestamp
	fLastDirtyTimestamp
	scalarFields

	fPort = iota - 2
	fSecurePort
	fDataCenterInfo
	fLeaseInfo
	fMetadata
	instanceFields
)

var instanceTable = newFieldTable(instanceNames, instanceOrder(fOverriddenStatus), instanceOrder(fOverriddenStatusLower))

var instanceNames = []string{
	fInstanceID:                    "instanceId",
	fHostName:                      "hostName",
	fApp:                           "app",
	fAppGroupName:                  "appGroupName",
	fIPAddr:                        "ipAddr",
	fSID:                           "sid",
	fHomePageURL:                   "homePageUrl",
	fStatusPageURL:                 "statusPageUrl",
	fHealthCheckURL:                "healthCheckUrl",
	fSecureHealthCheckURL:          "secureHealthCheckUrl",
	fVIPAddress:                    "vipAddress",
	fSecureVIPAddress:              "secureVipAddress",
	fASGName:                       "asgName",
	fStatus:                        "status",
	fOverriddenStatus:              "overriddenStatus",
	fOverriddenStatusLower:         "overriddenstatus",
	fActionType:                    "actionType",
	fIsCoordinatingDiscoveryServer: "isCoordinatingDiscoveryServer",
	fCountryID:                     "countryId",
	fLastUpdatedTimestamp:          "lastUpdatedTimestamp",
	fLastDirtyTimestamp:            "lastDirtyTimestamp",
	fPort:                          "port",
	fSecurePort:                    "securePort",
	fDataCenterInfo:                "dataCenterInfo",
	fLeaseInfo:                     "leaseInfo",
	fMetadata:                      "metadata",
}

// instanceOrder is the order of an instance's fields in what Java servers
// and this package write, with the override under the name the format
// gives it.
func instanceOrder(overridden int) []int {
	return []int{fInstanceID, fHostName, fApp, fIPAddr, fSID, fStatus, overridden,
		fPort, fSecurePort, fCountryID, fDataCenterInfo, fLeaseInfo, fMetadata, fAppGroupName, fHomePageURL,
		fStatusPageURL, fHealthCheckURL, fSecureHealthCheckURL, fVIPAddress, fSecureVIPAddress,
		fIsCoordinatingDiscoveryServer, fLastUpdatedTimestamp, fLastDirtyTimestamp, fActionType, fASGName}
}

// The leaseInfo fields. renewalTimestamp is an old name of
// lastRenewalTimestamp, read when the new one is absent and never written.
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

var leaseTable = newFieldTable([]string{
	leaseRenewalInterval: "renewalIntervalInSecs",
	leaseDuration:        "durationInSecs",
	leaseRegistration:    "registrationTimestamp",
	leaseLastRenewal:     "lastRenewalTimestamp",
	leaseRenewal:         "renewalTimestamp",
	leaseEviction:        "evictionTimestamp",
	leaseServiceUp:       "serviceUpTimestamp",
}, leaseOrder, leaseOrder)

var leaseOrder = []int{leaseRenewalInterval, leaseDuration, leaseRegistration, leaseLastRenewal,
	leaseEviction, leaseServiceUp, leaseRenewal}

// The dataCenterInfo fields. The class is a JSON key, "@class"; XML has it
// as an attribute, which the XML reader takes from the start tag.
const (
	dcClass = iota
	dcName
	dcMetadata
)

var dataCenterTable = newFieldTable([]string{dcClass: "@class", dcName: "name", dcMetadata: "metadata"},
	[]int{dcClass, dcName, dcMetadata}, []int{dcName, dcMetadata})

// The fields of a JSON port object; XML has the number as the element's
// text and "enabled" as an attribute.
const (
	portNumber = iota
	portEnabled
)

var portTable = newFieldTable([]string{portNumber: "$", portEnabled: "@enabled"},
	[]int{portNumber, portEnabled}, nil)

// The fields of an applications object.
const (
	appsVersionsDelta = iota
	appsHashcode
	appsApplication
)

var applicationsTable = newFieldTable([]string{
	appsVersionsDelta: "versions__delta",
	appsHashcode:      "apps__hashcode",
	appsApplication:   "application",
}, []int{appsVersionsDelta, appsHashcode, appsApplication}, []int{appsVersionsDelta, appsHashcode, appsApplication})

// The fields of an application object.
const (
	appName = iota
	appInstance
)

var applicationTable = newFieldTable([]string{appName: "name", appInstance: "instance"},
	[]int{appName, appInstance}, []int{appName, appInstance})

// The JSON documents' wrappers: {"applications":{...}},
// {"application":{...}} and {"instance":{...}}. An instance document may
// be the bare instance too, so its table is the instance's with the
// wrapper added.
var (
	applicationsDoc = newFieldTable([]string{"applications"}, []int{0}, nil)
	applicationDoc  = newFieldTable([]string{"application"}, []int{0}, nil)
	instanceDoc     = newFieldTable(append(instanceNames[:instanceFields:instanceFields], "instance"),
		instanceOrder(fOverriddenStatus), nil)
)

// fInstanceWrapper is "instance" in an instance document.
const fInstanceWrapper = instanceFields

// fieldTable is the fields of one kind of object.
type fieldTable struct {
	names  []string
	byName map[string]int // for the larger tables
	json   fieldOrder
	xml    fieldOrder
}

// fieldOrder is the order in which servers write an object's fields in
// one format, as the readers use it: by position, the field there, what
// the reader looks for (a JSON key with its quotes and colon, `"name":`,
// or the start of an XML start tag, `<name`) and the position after it;
// by field, the position after the field's.
type fieldOrder struct {
	steps []orderStep
	next  []int
}

type orderStep struct {
	expect []byte
	field  int
	next   int
}

func newFieldTable(names []string, jsonOrder, xmlOrder []int) *fieldTable {
	t := &fieldTable{names: names}
	if len(names) > 8 {
		t.byName = make(map[string]int, len(names))
		for f, name := range names {
			t.byName[name] = f
		}
	}
	t.json = newFieldOrder(names, jsonOrder, func(name string) string { return `"` + name + `":` })
	t.xml = newFieldOrder(names, xmlOrder, func(name string) string { return "<" + name })
	return t
}

func newFieldOrder(names []string, fields []int, spell func(string) string) fieldOrder {
	o := fieldOrder{next: make([]int, len(names))}
	for n, f := range fields {
		next := (n + 1) % len(fields)
		o.steps = append(o.steps, orderStep{expect: []byte(spell(names[f])), field: f, next: next})
		o.next[f] = next
	}
	return o
}

// lookahead is how many positions of an order predict tries: the next
// one, and past the optional fields that servers leave out when empty
// (sid, appGroupName, secureHealthCheckUrl).
const lookahead = 3

// predict returns the position, from p on and at most lookahead further,
// of the field whose key or start tag data starts with, or -1. An XML
// start tag must end with the name: at '>', '/' or the white space before
// its attributes.
func (o *fieldOrder) predict(data []byte, p int, xml bool) int {
	for k := 0; k < lookahead && k < len(o.steps); k, p = k+1, p+1 {
		if p >= len(o.steps) {
			p -= len(o.steps)
		}
		if !startsWith(data, o.steps[p].expect) {
			continue
		}
		if !xml {
			return p
		}
		switch data[len(o.steps[p].expect)] {
		case '>', '/', ' ', '\t', '\n', '\r':
			return p
		}
	}
	return -1
}

// startsWith reports whether data starts with key ("name": or <name) and
// has more after it. The byte after '"' or '<', tried first, tells most
// names apart.
func startsWith(data, key []byte) bool {
	return len(data) > len(key) && data[1] == key[1] && string(data[:len(key)]) == string(key)
}

// field returns the field an XML element name names (exactly), or -1.
func (t *fieldTable) field(name []byte) int {
	if t.byName != nil {
		if f, ok := t.byName[string(name)]; ok {
			return f
		}
		return -1
	}
	for f, n := range t.names {
		if string(name) == n {
			return f
		}
	}
	return -1
}

// fieldFold returns the field a JSON key names, matched as encoding/json
// matches keys to struct fields: exactly, or else case-insensitively with
// Unicode folding. It returns -1 for an unknown key.
func (t *fieldTable) fieldFold(key []byte) int {
	if f := t.field(key); f >= 0 {
		return f
	}
	for f, name := range t.names {
		if foldEqual(key, name) {
			return f
		}
	}
	return -1
}

// foldEqual reports whether key matches the ASCII name as encoding/json
// matches a key to a field name that is not an exact match: both folded
// rune by rune to the smallest rune of their Unicode fold set, so that
// "HOSTNAME" and "hoſtName" (long s) match "hostName".
func foldEqual(key []byte, name string) bool {
	// Each rune of key matches one byte of name and takes at least one
	// byte: a shorter key cannot match, and one of the same length only
	// byte for byte.
	if len(key) < len(name) {
		return false
	}
	if len(key) == len(name) {
		return asciiEqualFoldUpper(key, name)
	}
	n := 0
	for k := 0; k < len(key); n++ {
		if n >= len(name) {
			return false
		}
		want := name[n]
		if 'a' <= want && want <= 'z' {
			want -= 'a' - 'A'
		}
		c := key[k]
		if c < utf8.RuneSelf {
			if 'a' <= c && c <= 'z' {
				c -= 'a' - 'A'
			}
			if c != want {
				return false
			}
			k++
			continue
		}
		r, size := utf8.DecodeRune(key[k:])
		if foldRune(r) != rune(want) {
			return false
		}
		k += size
	}
	return n == len(name)
}

// foldRune returns the smallest rune of r's fold set, as encoding/json's.
func foldRune(r rune) rune {
	for {
		r2 := unicode.SimpleFold(r)
		if r2 <= r {
			return r2
		}
		r = r2
	}
}

// asciiEqualFoldUpper reports whether key and name are the same ASCII
// letters in any case, and the same other bytes.
func asciiEqualFoldUpper(key []byte, name string) bool {
	for n, c := range key {
		want := name[n]
		if c == want {
			continue
		}
		if 'a' <= c && c <= 'z' {
			c -= 'a' - 'A'
		}
		if 'a' <= want && want <= 'z' {
			want -= 'a' - 'A'
		}
		if c != want {
			return false
		}
	}
	return true
}
