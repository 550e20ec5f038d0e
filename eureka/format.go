package eureka

import (
	"errors"
	"strings"
)

// ErrCannotParse is returned for a body that is not a readable document. The
// server answers it with 400 "cannot parse request body", as Eureka does.
var ErrCannotParse = errors.New("cannot parse request body")

// ErrTooManyInstances is the error of DecodeApplicationsJSONMax for a
// document of more instances than its bound.
var ErrTooManyInstances = errors.New("too many instances")

// Format is a document encoding: the legacy JSON codec or the XStream XML
// codec.
type Format uint8

// The two formats.
const (
	FormatXML Format = iota
	FormatJSON
)

// ContentType returns the media type written for f.
func (f Format) ContentType() string {
	if f == FormatJSON {
		return "application/json"
	}
	return "application/xml"
}

// AcceptFormat picks the response format from an Accept header as the Java
// server does: JSON iff the header contains "json", otherwise XML.
func AcceptFormat(accept string) Format {
	if strings.Contains(accept, "json") {
		return FormatJSON
	}
	return FormatXML
}

// AppendInstance appends an instance document in format f.
func AppendInstance(b []byte, f Format, i *InstanceInfo) []byte {
	if f == FormatJSON {
		return AppendInstanceJSON(b, i)
	}
	return AppendInstanceXML(b, i)
}

// AppendApplication appends an application document in format f.
func AppendApplication(b []byte, f Format, a *Application) []byte {
	if f == FormatJSON {
		return AppendApplicationJSON(b, a)
	}
	return AppendApplicationXML(b, a)
}

// AppendApplications appends an applications document in format f.
func AppendApplications(b []byte, f Format, apps *Applications) []byte {
	if f == FormatJSON {
		return AppendApplicationsJSON(b, apps)
	}
	return AppendApplicationsXML(b, apps)
}

// DecodeInstance reads an instance document in format f.
func DecodeInstance(f Format, data []byte) (*InstanceInfo, error) {
	if f == FormatJSON {
		return DecodeInstanceJSON(data)
	}
	return DecodeInstanceXML(data)
}

// DecodeApplication reads an application document in format f.
func DecodeApplication(f Format, data []byte) (*Application, error) {
	if f == FormatJSON {
		return DecodeApplicationJSON(data)
	}
	return DecodeApplicationXML(data)
}

// DecodeApplications reads an applications document in format f.
func DecodeApplications(f Format, data []byte) (*Applications, error) {
	if f == FormatJSON {
		return DecodeApplicationsJSON(data)
	}
	return DecodeApplicationsXML(data)
}
