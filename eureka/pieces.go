package eureka

// An applications document can be assembled from pieces, so that a server
// re-encodes only the applications that changed: the head, then the
// entries (in JSON separated by ApplicationsSeparator), then the tail. The
// concatenation is byte for byte what AppendApplications writes for the
// same applications in the same order.

// AppendApplicationsHead appends the start of an applications document,
// up to the first application entry.
func AppendApplicationsHead(b []byte, f Format, versionsDelta int64, hash string) []byte {
	if f == FormatJSON {
		b = append(b, `{"applications":{"versions__delta":`...)
		b = appendQuotedInt(b, versionsDelta)
		b = append(b, `,"apps__hashcode":`...)
		b = AppendJSONString(b, hash)
		return append(b, `,"application":[`...)
	}
	b = append(b, "<applications>\n"...)
	b = appendXMLInt(b, 1, "versions__delta", versionsDelta)
	return appendXMLElem(b, 1, "apps__hashcode", hash)
}

// AppendApplicationsEntry appends one application as an entry of an
// applications document. a must have instances.
func AppendApplicationsEntry(b []byte, f Format, a *Application) []byte {
	if f == FormatJSON {
		return appendApplicationJSONBody(b, a)
	}
	return appendApplicationXML(b, a, 1)
}

// ApplicationsSeparator returns what goes between two entries: a comma in
// JSON, nothing in XML.
func ApplicationsSeparator(f Format) []byte {
	if f == FormatJSON {
		return []byte{','}
	}
	return nil
}

// AppendApplicationsTail appends the end of an applications document.
func AppendApplicationsTail(b []byte, f Format) []byte {
	if f == FormatJSON {
		return append(b, "]}}"...)
	}
	return append(b, "</applications>"...)
}

// An application entry can itself be assembled from pieces, so that a
// server re-encodes only the instances that changed (the delta): the
// entry's head, its instances (in JSON separated by
// InstanceSeparator), its tail. The concatenation is byte for byte what
// AppendApplicationsEntry writes for the application.

// AppendEntryHead appends the start of application name's entry, up to
// its first instance.
func AppendEntryHead(b []byte, f Format, name string) []byte {
	if f == FormatJSON {
		b = append(b, `{"name":`...)
		b = AppendJSONString(b, name)
		return append(b, `,"instance":[`...)
	}
	b = appendIndent(b, 1)
	b = append(b, "<application>\n"...)
	return appendXMLElem(b, 2, "name", name)
}

// AppendEntryInstance appends one instance of an application entry.
func AppendEntryInstance(b []byte, f Format, i *InstanceInfo) []byte {
	if f == FormatJSON {
		return AppendInstanceJSONBody(b, i)
	}
	return appendInstanceXML(b, i, 2)
}

// InstanceSeparator returns what goes between two instances of an
// entry: a comma in JSON, nothing in XML.
func InstanceSeparator(f Format) []byte { return ApplicationsSeparator(f) }

// AppendEntryTail appends the end of an application entry.
func AppendEntryTail(b []byte, f Format) []byte {
	if f == FormatJSON {
		return append(b, "]}"...)
	}
	b = appendIndent(b, 1)
	return append(b, "</application>\n"...)
}
