package eureka

import (
	"bytes"
	"strings"
)

// Both decoders read an instance into a draft, which records what each
// field held, and keep the instance's strings in one buffer. build then
// makes the InstanceInfo, filling in what the document left out as the
// Java server's builder does, so that JSON and XML cannot disagree on a
// default: status UP, port 7001 enabled, secure port 7002 disabled,
// countryId 1, sid "na". A missing lastDirtyTimestamp is left 0 for the
// caller to fill in.

// span is text[start:end] of a builder.
type span struct{ start, end int }

// num is a number as read: absent (also null or blank text), a number, or
// text that is not one. Only the XML reader makes the last kind, which
// fails the build if the number is used (the JSON reader fails at once).
type num struct {
	v     int64
	state uint8
}

// The states of a num are bits, so that or-ed together they tell whether
// any of them is numBad.
const (
	numAbsent = 0
	numSet    = 1
	numBad    = 2
)

// pair is one map entry; del removes the key, for JSON's null and the Java
// EmptyMap marker.
type pair struct {
	k, v span
	del  bool
}

// mapRange is a map as read: the builder's pairs[from:to], when present.
type mapRange struct {
	present  bool
	from, to int
}

// draftPort is a port as read. A later port in the same document changes
// only what it gives.
type draftPort struct {
	present    bool
	number     num
	enabled    bool
	hasEnabled bool
}

type draftDataCenter struct {
	present     bool
	amazonClass bool // the class named is AmazonInfo
	name        span
	metadata    mapRange
}

type draftLease struct {
	present bool
	f       [leaseFields]num
}

// draft is an instance as read.
type draft struct {
	str       [stringFields]span
	hasID     bool // instanceId was there, even if empty
	hasStatus bool
	status    Status
	// overridden is overriddenStatus (JSON, either spelling) or
	// overriddenstatus (XML); XML's overriddenStatus is overriddenAlt,
	// used when the other says UNKNOWN.
	overridden    Status
	overriddenAlt Status
	action        ActionType
	coordinating  bool
	port          draftPort
	securePort    draftPort
	countryID     num
	updated       num
	dirty         num
	dataCenter    draftDataCenter
	lease         draftLease
	metadata      mapRange
}

// builder holds the strings and map entries of the instance being read.
type builder struct {
	text  []byte
	pairs []pair
}

// since returns the span of the text appended from start on.
func (b *builder) since(start int) span { return span{start, len(b.text)} }

// trimmedSince is since without the white space around the text.
func (b *builder) trimmedSince(start int) span {
	t := bytes.TrimSpace(b.text[start:])
	if len(t) == 0 {
		return span{start, start}
	}
	from := start + cap(b.text[start:]) - cap(t) // t is a part of text
	return span{from, from + len(t)}
}

// addPair adds a map entry whose key and value are text[k:v] and text[v:].
func (b *builder) addPair(k, v int) {
	b.pairs = append(b.pairs, pair{k: span{k, v}, v: span{v, len(b.text)}})
}

// reset drops what the builder holds.
func (b *builder) reset() { b.text, b.pairs = b.text[:0], b.pairs[:0] }

// build makes the InstanceInfo that w describes, with the Java server's
// defaults, and resets the builder for the next instance; the instance's
// strings share one allocation. It reports false when a number that is
// used did not parse.
func (b *builder) build(w *draft) (*InstanceInfo, bool) {
	s := string(b.text)
	str := func(f int) string { return s[w.str[f].start:w.str[f].end] }
	i := &InstanceInfo{
		InstanceID:                    str(fInstanceID),
		HasInstanceID:                 w.hasID,
		HostName:                      str(fHostName),
		App:                           strings.ToUpper(str(fApp)),
		AppGroupName:                  strings.ToUpper(str(fAppGroupName)),
		IPAddr:                        str(fIPAddr),
		SID:                           str(fSID),
		Status:                        StatusUp,
		OverriddenStatus:              w.overridden,
		CountryID:                     1,
		Metadata:                      b.buildMap(s, w.metadata),
		HomePageURL:                   str(fHomePageURL),
		StatusPageURL:                 str(fStatusPageURL),
		HealthCheckURL:                str(fHealthCheckURL),
		SecureHealthCheckURL:          str(fSecureHealthCheckURL),
		VIPAddress:                    str(fVIPAddress),
		SecureVIPAddress:              str(fSecureVIPAddress),
		IsCoordinatingDiscoveryServer: w.coordinating,
		LastUpdatedTimestamp:          w.updated.v,
		LastDirtyTimestamp:            w.dirty.v,
		ActionType:                    w.action,
		ASGName:                       str(fASGName),
	}
	if i.SID == "" {
		i.SID = "na"
	}
	if w.hasStatus {
		i.Status = w.status
	}
	if i.OverriddenStatus == StatusUnknown {
		i.OverriddenStatus = w.overriddenAlt
	}
	if w.countryID.state == numSet {
		i.CountryID = int(w.countryID.v)
	}
	i.Port = w.port.result(DefaultPort, true)
	i.SecurePort = w.securePort.result(DefaultSecurePort, false)
	// The states are bits: or-ed, they say whether a number used is bad.
	states := w.port.number.state | w.securePort.number.state | w.countryID.state | w.updated.state | w.dirty.state
	if w.lease.present {
		l := &w.lease.f
		last := l[leaseLastRenewal]
		if last.state == numAbsent {
			last = l[leaseRenewal]
		}
		i.LeaseInfo = LeaseInfo{
			RenewalIntervalInSecs: int(l[leaseRenewalInterval].v),
			DurationInSecs:        int(l[leaseDuration].v),
			RegistrationTimestamp: l[leaseRegistration].v,
			LastRenewalTimestamp:  last.v,
			EvictionTimestamp:     l[leaseEviction].v,
			ServiceUpTimestamp:    l[leaseServiceUp].v,
		}
		states |= l[leaseRenewalInterval].state | l[leaseDuration].state | l[leaseRegistration].state |
			last.state | l[leaseEviction].state | l[leaseServiceUp].state
	}
	if dc := &w.dataCenter; dc.present {
		i.DataCenterInfo = b.resolveDataCenter(s, dc)
	}
	b.reset()
	return i, states&numBad == 0
}

// result is the port read, over the defaults for what it leaves out.
func (p *draftPort) result(number int, enabled bool) Port {
	out := Port{Number: number, Enabled: enabled}
	if !p.present {
		return out
	}
	if p.number.state == numSet {
		out.Number = int(p.number.v)
	}
	if p.hasEnabled {
		out.Enabled = p.enabled
	}
	return out
}

// resolveDataCenter resolves the data center's type from its name or, when the
// name is empty, from its class, as Java resolves a class that is missing
// or unknown. Amazon keeps its metadata; MyOwn and Netflix are matched in
// any case; any other name is kept as it is and written with the default
// class, as a Java server writes MyOwn.
func (b *builder) resolveDataCenter(s string, dc *draftDataCenter) DataCenterInfo {
	name := s[dc.name.start:dc.name.end]
	switch {
	case strings.EqualFold(name, DataCenterAmazon) || name == "" && dc.amazonClass:
		m := b.buildMap(s, dc.metadata)
		if m == nil {
			m = map[string]string{}
		}
		return DataCenterInfo{Name: DataCenterAmazon, Metadata: m}
	case strings.EqualFold(name, DataCenterMyOwn):
		name = DataCenterMyOwn
	case strings.EqualFold(name, DataCenterNetflix):
		name = DataCenterNetflix
	}
	return DataCenterInfo{Name: name}
}

// buildMap makes the map m read, or nil when it was absent or null.
func (b *builder) buildMap(s string, m mapRange) map[string]string {
	if !m.present {
		return nil
	}
	out := make(map[string]string, m.to-m.from)
	for _, p := range b.pairs[m.from:m.to] {
		if p.del {
			delete(out, s[p.k.start:p.k.end])
		} else {
			out[s[p.k.start:p.k.end]] = s[p.v.start:p.v.end]
		}
	}
	return out
}

// newApplications makes the Applications a reader found; versions__delta
// is -1 when the document has none. It reports false when versions__delta
// is not a number.
func newApplications(version num, hashcode string, apps []*Application) (*Applications, bool) {
	out := &Applications{VersionsDelta: -1, AppsHashcode: hashcode, Applications: apps}
	if version.state == numSet {
		out.VersionsDelta = version.v
	}
	return out, version.state != numBad
}

// newApplication makes an application of what a reader found; its name is
// upper-cased, as Java's decoders do.
func newApplication(name string, instances []*InstanceInfo) *Application {
	return &Application{Name: strings.ToUpper(name), Instances: instances}
}
