package eureka

import "strings"

// The JSON reader of an InstanceInfo object and of its parts, into a draft
// (see build.go).

// instance reads an InstanceInfo object (pos at '{') into w.
func (d *jsonDecoder) instance(w *draft) bool {
	o := jsonObject{fields: instanceTable}
	for ok := true; d.member(&o, ok); {
		ok = d.instanceField(w, o.field)
	}
	return !o.failed
}

// instanceField reads the value of field f into w.
func (d *jsonDecoder) instanceField(w *draft, f int) bool {
	if f < stringFields {
		set, ok := d.string(&w.str[f])
		if f == fInstanceID {
			w.hasID = set
		}
		return ok
	}
	switch f {
	case fStatus, fOverriddenStatus, fOverriddenStatusLower, fActionType:
		b, set, ok := d.value()
		switch f {
		case fStatus:
			w.hasStatus, w.status = set, ParseStatus(string(b))
		case fActionType:
			w.action = ParseActionType(string(b))
		default: // JSON has one field, whatever the case of its key
			w.overridden = ParseStatus(string(b))
		}
		return ok
	case fIsCoordinatingDiscoveryServer:
		var ok bool
		w.coordinating, _, ok = d.bool()
		return ok
	case fCountryID:
		return d.int(&w.countryID)
	case fLastUpdatedTimestamp:
		return d.int(&w.updated)
	case fLastDirtyTimestamp:
		return d.int(&w.dirty)
	case fPort:
		return d.port(&w.port)
	case fSecurePort:
		return d.port(&w.securePort)
	case fDataCenterInfo:
		return d.dataCenter(&w.dataCenter)
	case fLeaseInfo:
		return d.lease(&w.lease)
	default: // fMetadata
		return d.stringMap(&w.metadata)
	}
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

// string reads a string field into the instance's text; null empties it
// and reports set false.
func (d *jsonDecoder) string(dst *span) (set, ok bool) {
	b, set, ok := d.value()
	if !ok {
		return false, false
	}
	start := len(d.text)
	d.text = append(d.text, b...)
	*dst = d.since(start)
	return set, true
}

// int reads a number or a numeric string ("" and null are absent).
func (d *jsonDecoder) int(dst *num) bool {
	if v, ok := d.quickInt(); ok {
		*dst = num{v, numSet}
		return true
	}
	switch c := d.ws(); c {
	case '"':
		content, plain, ok := d.str()
		if !ok {
			return false
		}
		if v, ok := quickInt(content); ok {
			*dst = num{v, numSet}
			return true
		}
		if !plain {
			d.tmp = appendUnquoted(d.tmp[:0], content)
			content = d.tmp
		}
		s := strings.TrimSpace(string(content))
		if s == "" {
			*dst = num{}
			return true
		}
		v, ok := parseInt(s)
		*dst = num{v, numSet}
		return ok
	case '{', '[', 0:
		return false
	default:
		b, ok := d.scalar(c)
		if !ok {
			return false
		}
		if b[0] == 'n' {
			*dst = num{}
			return true
		}
		v, ok := quickInt(b)
		if !ok {
			v, ok = parseInt(string(b))
		}
		*dst = num{v, numSet}
		return ok
	}
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

// bool reads a boolean or one of the strings "true" and "false" (any case;
// "" is false). set is false for null.
func (d *jsonDecoder) bool() (v, set, ok bool) {
	c := d.ws()
	if c == '{' || c == '[' || c == 0 {
		return false, false, false
	}
	b, ok := d.scalar(c)
	if !ok {
		return false, false, false
	}
	if c == '"' {
		b = b[1 : len(b)-1] // the raw content: an escape is never true or false
	} else if b[0] == 'n' {
		return false, false, true
	}
	switch {
	case asciiEqualFold(b, "true"):
		return true, true, true
	case asciiEqualFold(b, "false") || len(b) == 0:
		return false, true, true
	}
	return false, false, false
}

// port reads a port object, or a bare number or numeric string, which
// changes only the number.
func (d *jsonDecoder) port(p *draftPort) bool {
	switch d.ws() {
	case 'n':
		*p = draftPort{}
		return d.null()
	case '[':
		return false
	case '{':
	default:
		p.present = true
		return d.int(&p.number)
	}
	obj := draftPort{present: true}
	o := jsonObject{fields: portTable}
	for ok := true; d.member(&o, ok); {
		if o.field == portNumber {
			ok = d.int(&obj.number)
		} else {
			obj.enabled, obj.hasEnabled, ok = d.bool()
		}
	}
	*p = obj
	return !o.failed
}

// dataCenter reads a dataCenterInfo object, merged into an earlier one.
func (d *jsonDecoder) dataCenter(dc *draftDataCenter) bool {
	if d.ws() == 'n' {
		*dc = draftDataCenter{}
		return d.null()
	}
	dc.present = true
	o := jsonObject{fields: dataCenterTable}
	for ok := true; d.member(&o, ok); {
		switch o.field {
		case dcName:
			_, ok = d.string(&dc.name)
		case dcClass:
			var b []byte
			b, _, ok = d.value()
			dc.amazonClass = string(b) == AmazonDataCenterClass
		default: // dcMetadata
			ok = d.stringMap(&dc.metadata)
		}
	}
	return !o.failed
}

// lease reads a leaseInfo object, merged into an earlier one.
func (d *jsonDecoder) lease(l *draftLease) bool {
	if d.ws() == 'n' {
		*l = draftLease{}
		return d.null()
	}
	l.present = true
	o := jsonObject{fields: leaseTable}
	for ok := true; d.member(&o, ok); {
		ok = d.int(&l.f[o.field])
	}
	return !o.failed
}

// stringMap reads an object of scalars. A null value, and Java's marker
// for an empty map ("@class" naming EmptyMap), remove their key.
func (d *jsonDecoder) stringMap(m *mapRange) bool {
	if d.ws() == 'n' {
		*m = mapRange{}
		return d.null()
	}
	from := len(d.pairs)
	var o jsonObject
	for ok := true; d.member(&o, ok); {
		k := len(d.text)
		d.text = append(d.text, o.key...)
		var b []byte
		var set bool
		if b, set, ok = d.value(); !set || string(o.key) == "@class" && strings.HasSuffix(string(b), "EmptyMap") {
			d.pairs = append(d.pairs, pair{k: d.since(k), del: true})
			continue
		}
		v := len(d.text)
		d.text = append(d.text, b...)
		d.addPair(k, v)
	}
	*m = mapRange{true, from, len(d.pairs)}
	return !o.failed
}
