package eureka

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
// a bare InstanceInfo object. Fields the document leaves out take the Java
// server's defaults: status UP, ports 7001 (enabled) and 7002 (disabled),
// countryId 1, sid "na". A missing lastDirtyTimestamp is left 0 for the
// caller to fill in.
func DecodeInstanceJSON(data []byte) (*InstanceInfo, error) {
	d := newJSONDecoder(data)
	i, ok := d.instanceDocument()
	if !ok || !d.atEnd() {
		return nil, ErrCannotParse
	}
	return i, nil
}

// DecodeApplicationsJSON reads an {"applications":{...}} document: a full
// registry, a delta or a VIP result. "application" and "instance" may be
// arrays or single objects; versions__delta may be a number or a string.
func DecodeApplicationsJSON(data []byte) (*Applications, error) {
	return DecodeApplicationsJSONMax(data, 0)
}

// DecodeApplicationsJSONMax is DecodeApplicationsJSON with a bound on the
// instances (none when max is 0 or less): it stops at the instance past
// max, with ErrTooManyInstances, so that a registry over the bound never
// costs more than max instances' memory, however many it holds.
func DecodeApplicationsJSONMax(data []byte, max int) (*Applications, error) {
	over := false
	w, ok := wrapped(data, applicationsDoc, func(d *jsonDecoder, w *jsonApplications) bool {
		d.maxInstances = max
		ok := d.applications(w)
		over = over || d.over
		return ok
	})
	switch {
	case over:
		return nil, ErrTooManyInstances
	case !ok:
		return nil, ErrCannotParse
	}
	apps, _ := newApplications(w.version, w.hashcode, w.apps)
	return apps, nil
}

// DecodeApplicationJSON reads an {"application":{...}} document.
func DecodeApplicationJSON(data []byte) (*Application, error) {
	if w, ok := wrapped(data, applicationDoc, (*jsonDecoder).application); ok {
		return newApplication(w.name, w.instances), nil
	}
	return nil, ErrCannotParse
}

// jsonDecoder builds documents from a jsonScanner.
type jsonDecoder struct {
	jsonScanner
	builder
	tmp []byte // unquoted values
	// instances counts the instances read; past maxInstances (when above
	// 0) the read stops, over set (DecodeApplicationsJSONMax).
	instances, maxInstances int
	over                    bool
}

func newJSONDecoder(data []byte) *jsonDecoder {
	return &jsonDecoder{jsonScanner: jsonScanner{data: data}}
}

// instanceDocument reads the value at pos as DecodeInstanceJSON reads a
// document: {"instance":{...}}, a bare InstanceInfo object, or null (an
// instance with every default).
func (d *jsonDecoder) instanceDocument() (*InstanceInfo, bool) {
	var outer, inner draft
	wrapped := false
	if d.ws() == 'n' {
		if !d.null() {
			return nil, false
		}
		return d.build(&outer)
	}
	o := jsonObject{fields: instanceDoc}
	for ok := true; d.member(&o, ok); {
		switch {
		case o.field != fInstanceWrapper:
			ok = d.instanceField(&outer, o.field)
		case d.ws() == '{':
			if !wrapped {
				inner, wrapped = draft{}, true
			}
			ok = d.instance(&inner)
		default:
			inner, wrapped = draft{}, false
			ok = d.ws() == 'n' && d.null()
		}
	}
	switch {
	case o.failed:
		return nil, false
	case wrapped:
		return d.build(&inner)
	}
	return d.build(&outer)
}

// wrapped reads a document {"<name>":{...}} (other keys skipped), with
// read for the object. As encoding/json reads into a pointer, a repeated
// name merges into what the earlier objects gave, and null empties it. It
// reports whether the document is well-formed and ends with the object
// there.
func wrapped[T any](data []byte, doc *fieldTable, read func(*jsonDecoder, *T) bool) (w T, ok bool) {
	d := newJSONDecoder(data)
	present := false
	o := jsonObject{fields: doc}
	for ok := true; d.member(&o, ok); {
		switch d.ws() {
		case '{':
			if !present {
				w, present = *new(T), true
			}
			ok = read(d, &w)
		case 'n':
			w, present = *new(T), false
			ok = d.null()
		default:
			ok = false
		}
	}
	return w, !o.failed && present && d.atEnd()
}

// jsonApplications is an applications object as read.
type jsonApplications struct {
	version  num
	hashcode string
	apps     []*Application
}

// jsonApplication is an application object as read.
type jsonApplication struct {
	name      string
	instances []*InstanceInfo
}

// applications reads an applications object (pos at '{') into w.
func (d *jsonDecoder) applications(w *jsonApplications) bool {
	o := jsonObject{fields: applicationsTable}
	for ok := true; d.member(&o, ok); {
		switch o.field {
		case appsVersionsDelta:
			ok = d.int(&w.version)
		case appsHashcode:
			var b []byte
			b, _, ok = d.value()
			w.hashcode = string(b)
		default: // appsApplication
			w.apps = nil // a repeated key replaces the list
			var l jsonList
			for ok = true; d.element(&l, ok); {
				var a jsonApplication
				ok = l.null || d.application(&a)
				w.apps = append(w.apps, newApplication(a.name, a.instances))
			}
			ok = !l.failed
		}
	}
	return !o.failed
}

// application reads an application object (pos at '{') into w.
func (d *jsonDecoder) application(w *jsonApplication) bool {
	o := jsonObject{fields: applicationTable}
	for ok := true; d.member(&o, ok); {
		if o.field == appName {
			var b []byte
			b, _, ok = d.value()
			w.name = string(b)
			continue
		}
		w.instances = nil // a repeated key replaces the list
		var l jsonList
		for ok = true; d.element(&l, ok); {
			if d.instances++; d.maxInstances > 0 && d.instances > d.maxInstances {
				d.over = true
				return false
			}
			var i draft
			ok = l.null || d.instance(&i)
			inst, _ := d.build(&i)
			w.instances = append(w.instances, inst)
		}
		ok = !l.failed
	}
	return !o.failed
}

// jsonList is a walk over a list of objects, which may be an array of
// objects and nulls (a null stands for an empty object), a single object,
// or null (no objects):
//
//	var l jsonList
//	for ok := true; d.element(&l, ok); {
//		ok = ... // read the object, or take an empty one if l.null
//	}
//	if l.failed { ... }
type jsonList struct {
	array  jsonArray
	open   bool
	single bool // the list is one object, not an array
	null   bool // the element at hand is null
	failed bool
}

// element moves to the next element of the list, leaving pos at it; ok
// says whether the caller could read the element before. It reports false
// after the last one and on an error, which sets l.failed.
func (d *jsonDecoder) element(l *jsonList, ok bool) bool {
	switch {
	case !ok:
		l.failed = true
		return false
	case l.single:
		return false
	case !l.open:
		l.open = true
		switch d.ws() {
		case 'n':
			l.failed = !d.null()
			return false
		case '{':
			l.single = true
			return true
		}
	}
	if !d.item(&l.array, true) {
		l.failed = l.array.failed
		return false
	}
	switch d.ws() {
	case '{':
		l.null = false
		return true
	case 'n':
		l.null = true
		if d.null() {
			return true
		}
	}
	l.failed = true
	return false
}
