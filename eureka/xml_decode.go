package eureka

import "strings"

// The XML decoders read an <instance>, <application> or <applications> as
// XStream and fargo write them, as encoding/xml's Unmarshal into the
// decoders' old structs did (the differential fuzz targets hold them to
// it): the root element's name is not checked; child elements match by
// local name, exactly; unknown elements are skipped; an element's text is
// the text directly inside it; a repeated element overrides the earlier
// one, and a repeated <port>, <dataCenterInfo> or <leaseInfo> is merged
// into the earlier one; nothing after the root element is read.
//
// One walker reads the documents, through an xmlReader: from the bytes
// with its scanner or, for the documents the scanner gives up on, from
// encoding/xml's tokens. Status and action text is trimmed and status text
// upper-cased; numbers are trimmed, and text that is not one fails the
// document if its field is used.

// DecodeInstanceXML reads an <instance> document with the same defaults as
// DecodeInstanceJSON. Status text is upper-cased first; empty or unknown
// text is UNKNOWN, except that a missing <status> means UP.
func DecodeInstanceXML(data []byte) (*InstanceInfo, error) {
	return decodeXML(data, (*xmlDecoder).instanceDocument)
}

// DecodeApplicationsXML reads an <applications> document.
func DecodeApplicationsXML(data []byte) (*Applications, error) {
	return decodeXML(data, (*xmlDecoder).applicationsDocument)
}

// DecodeApplicationXML reads an <application> document.
func DecodeApplicationXML(data []byte) (*Application, error) {
	return decodeXML(data, (*xmlDecoder).applicationDocument)
}

// decodeXML reads data with read, from the scanner and, if that fails,
// again from encoding/xml's tokens, whose failure is the document's.
func decodeXML[T any](data []byte, read func(*xmlDecoder) (T, bool)) (T, error) {
	if v, ok := readXML(data, false, read); ok {
		return v, nil
	}
	v, ok := readXML(data, true, read)
	if !ok {
		return v, ErrCannotParse
	}
	return v, nil
}

// readXML reads data with read, from the scanner or from encoding/xml's
// tokens.
func readXML[T any](data []byte, tokens bool, read func(*xmlDecoder) (T, bool)) (T, bool) {
	d := &xmlDecoder{xmlReader: newXMLReader(data, tokens)}
	return read(d)
}

// xmlDecoder builds documents from what an xmlReader finds.
type xmlDecoder struct {
	xmlReader
	builder
	tmp []byte
}

func (d *xmlDecoder) instanceDocument() (*InstanceInfo, bool) {
	var w draft
	if !d.root() || !d.instance(&w) {
		return nil, false
	}
	return d.build(&w)
}

func (d *xmlDecoder) applicationsDocument() (*Applications, bool) {
	if !d.root() {
		return nil, false
	}
	var version num
	var hashcode string
	var apps []*Application
	e := d.open(applicationsTable)
	for ok := true; d.child(&e, ok); {
		switch e.field {
		case appsVersionsDelta:
			d.tmp, ok = d.leaf(d.tmp[:0])
			version = parseXMLNum(d.tmp)
		case appsHashcode:
			d.tmp, ok = d.leaf(d.tmp[:0])
			hashcode = string(d.tmp)
		default: // appsApplication
			var a *Application
			a, ok = d.application()
			apps = append(apps, a)
		}
	}
	if e.failed {
		return nil, false
	}
	return newApplications(version, strings.TrimSpace(hashcode), apps)
}

func (d *xmlDecoder) applicationDocument() (*Application, bool) {
	if !d.root() {
		return nil, false
	}
	return d.application()
}

// application reads the children of the <application> just started. An
// instance whose numbers do not parse fails it.
func (d *xmlDecoder) application() (*Application, bool) {
	var name string
	var instances []*InstanceInfo
	e := d.open(applicationTable)
	for ok := true; d.child(&e, ok); {
		if e.field == appName {
			d.tmp, ok = d.leaf(d.tmp[:0])
			name = string(d.tmp)
			continue
		}
		var w draft
		var i *InstanceInfo
		if ok = d.instance(&w); ok {
			i, ok = d.build(&w)
		}
		instances = append(instances, i)
	}
	if e.failed {
		return nil, false
	}
	return newApplication(strings.TrimSpace(name), instances), true
}

// instance reads the children of the <instance> just started into w.
func (d *xmlDecoder) instance(w *draft) bool {
	e := d.open(instanceTable)
	for ok := true; d.child(&e, ok); {
		ok = d.instanceField(w, e.field)
	}
	return !e.failed
}

// instanceField reads the child f of an instance, whose start tag was just
// read.
func (d *xmlDecoder) instanceField(w *draft, f int) bool {
	var ok bool
	if f < scalarFields {
		start := len(d.text)
		d.text, ok = d.leaf(d.text)
		d.setText(w, f, start)
		return ok
	}
	switch f {
	case fPort, fSecurePort:
		p := &w.port
		if f == fSecurePort {
			p = &w.securePort
		}
		p.present = true
		if d.hasEnabled {
			p.enabled, p.hasEnabled = enabledOf(d.enabled)
		}
		d.tmp, ok = d.leaf(d.tmp[:0])
		p.number = parseXMLNum(d.tmp)
		return ok
	case fMetadata:
		return d.stringMap(&w.metadata)
	case fLeaseInfo:
		return d.lease(&w.lease)
	default: // fDataCenterInfo
		return d.dataCenter(&w.dataCenter)
	}
}

// setText stores the text of the scalar field f, which is text[start:].
// Only the string fields keep it there.
func (d *xmlDecoder) setText(w *draft, f int, start int) {
	if f < stringFields {
		w.str[f] = d.since(start)
		if f == fInstanceID {
			w.hasID = true
		}
		return
	}
	b := d.text[start:]
	switch f {
	case fStatus:
		w.hasStatus, w.status = true, parseXMLStatus(b)
	case fOverriddenStatusLower:
		w.overridden = parseXMLStatus(b)
	case fOverriddenStatus:
		w.overriddenAlt = parseXMLStatus(b)
	case fActionType:
		w.action = ParseActionType(string(b))
		if w.action == ActionNone {
			w.action = ParseActionType(strings.TrimSpace(string(b)))
		}
	case fIsCoordinatingDiscoveryServer:
		switch {
		case asciiEqualFold(b, "true"):
			w.coordinating = true
		case asciiEqualFold(b, "false"):
			w.coordinating = false
		default:
			w.coordinating = strings.EqualFold(strings.TrimSpace(string(b)), "true")
		}
	case fCountryID:
		w.countryID = parseXMLNum(b)
	case fLastUpdatedTimestamp:
		w.updated = parseXMLNum(b)
	case fLastDirtyTimestamp:
		w.dirty = parseXMLNum(b)
	}
	d.text = d.text[:start]
}

// lease reads the children of a <leaseInfo>, merged into an earlier one.
func (d *xmlDecoder) lease(l *draftLease) bool {
	l.present = true
	e := d.open(leaseTable)
	for ok := true; d.child(&e, ok); {
		d.tmp, ok = d.leaf(d.tmp[:0])
		l.f[e.field] = parseXMLNum(d.tmp)
	}
	return !e.failed
}

// dataCenter reads a <dataCenterInfo>, merged into an earlier one: its
// class attribute, and the <name> and <metadata> children.
func (d *xmlDecoder) dataCenter(dc *draftDataCenter) bool {
	dc.present = true
	if d.hasClass {
		dc.amazonClass = string(d.class) == AmazonDataCenterClass
	}
	e := d.open(dataCenterTable)
	for ok := true; d.child(&e, ok); {
		if e.field == dcMetadata {
			ok = d.stringMap(&dc.metadata)
			continue
		}
		start := len(d.text)
		d.text, ok = d.leaf(d.text)
		dc.name = d.trimmedSince(start)
	}
	return !e.failed
}

// stringMap reads a <metadata> map: one child element per key, its name
// unescaped, its text the value.
func (d *xmlDecoder) stringMap(m *mapRange) bool {
	from := len(d.pairs)
	e := d.open(nil)
	for ok := true; d.child(&e, ok); {
		k := len(d.text)
		d.text = d.appendKey(d.text)
		v := len(d.text)
		d.text, ok = d.leaf(d.text)
		d.addPair(k, v)
	}
	*m = mapRange{true, from, len(d.pairs)}
	return !e.failed
}

// parseXMLNum parses the text of a numeric element: blank is absent.
func parseXMLNum(b []byte) num {
	if v, ok := quickInt(b); ok {
		return num{v, numSet}
	}
	s := strings.TrimSpace(string(b))
	if s == "" {
		return num{}
	}
	if v, ok := parseInt(s); ok {
		return num{v, numSet}
	}
	return num{state: numBad}
}

// parseXMLStatus upper-cases and trims the text first.
func parseXMLStatus(b []byte) Status {
	if s, ok := LookupStatus(string(b)); ok {
		return s
	}
	return ParseStatus(strings.ToUpper(strings.TrimSpace(string(b))))
}

// enabledOf reads an enabled attribute: "true" or "false", in any case and
// with white space around; set is false for any other value.
func enabledOf(b []byte) (v, set bool) {
	switch {
	case string(b) == "true":
		return true, true
	case string(b) == "false":
		return false, true
	}
	switch strings.ToLower(strings.TrimSpace(string(b))) {
	case "true":
		return true, true
	case "false":
		return false, true
	}
	return false, false
}
