package eureka

import (
	"strconv"
	"unicode/utf8"
)

// The XML codec writes XStream's layout as the Java servers do: no
// declaration, two-space pretty printing, "overriddenstatus" in lower case,
// ports as <port enabled="true">8080</port>, class attributes on
// dataCenterInfo and on an empty metadata map, and metadata element names
// escaped ("_" as "__", "$" as "_-").

// AppendInstanceXML appends an <instance> document to b.
func AppendInstanceXML(b []byte, i *InstanceInfo) []byte {
	return appendInstanceXML(b, i, 0)
}

// AppendApplicationXML appends an <application> document to b.
func AppendApplicationXML(b []byte, a *Application) []byte {
	return appendApplicationXML(b, a, 0)
}

// AppendApplicationsXML appends an <applications> document to b.
// Applications without instances are left out.
func AppendApplicationsXML(b []byte, apps *Applications) []byte {
	b = append(b, "<applications>\n"...)
	b = appendXMLInt(b, 1, "versions__delta", apps.VersionsDelta)
	b = appendXMLElem(b, 1, "apps__hashcode", apps.AppsHashcode)
	for _, a := range apps.Applications {
		if len(a.Instances) > 0 {
			b = appendApplicationXML(b, a, 1)
		}
	}
	return append(b, "</applications>"...)
}

func appendApplicationXML(b []byte, a *Application, depth int) []byte {
	b = appendIndent(b, depth)
	b = append(b, "<application>\n"...)
	b = appendXMLElem(b, depth+1, "name", a.Name)
	for _, i := range a.Instances {
		b = appendInstanceXML(b, i, depth+1)
	}
	b = appendIndent(b, depth)
	b = append(b, "</application>"...)
	if depth > 0 {
		b = append(b, '\n')
	}
	return b
}

func appendInstanceXML(b []byte, i *InstanceInfo, depth int) []byte {
	d := depth + 1
	b = appendIndent(b, depth)
	b = append(b, "<instance>\n"...)
	if i.HasInstanceID {
		b = appendXMLElem(b, d, "instanceId", i.InstanceID)
	}
	b = appendXMLElem(b, d, "hostName", i.HostName)
	b = appendXMLElem(b, d, "app", i.App)
	b = appendXMLElem(b, d, "ipAddr", i.IPAddr)
	if i.SID != "" && i.SID != "na" && i.SID != "unknown" {
		b = appendXMLElem(b, d, "sid", i.SID)
	}
	b = appendXMLElem(b, d, "status", i.Status.String())
	b = appendXMLElem(b, d, "overriddenstatus", i.OverriddenStatus.String())
	b = appendPortXML(b, d, "port", i.Port)
	b = appendPortXML(b, d, "securePort", i.SecurePort)
	b = appendXMLInt(b, d, "countryId", int64(i.CountryID))
	b = appendDataCenterXML(b, d, &i.DataCenterInfo)
	b = appendIndent(b, d)
	b = append(b, "<leaseInfo>\n"...)
	l := &i.LeaseInfo
	b = appendXMLInt(b, d+1, "renewalIntervalInSecs", int64(l.RenewalIntervalInSecs))
	b = appendXMLInt(b, d+1, "durationInSecs", int64(l.DurationInSecs))
	b = appendXMLInt(b, d+1, "registrationTimestamp", l.RegistrationTimestamp)
	b = appendXMLInt(b, d+1, "lastRenewalTimestamp", l.LastRenewalTimestamp)
	b = appendXMLInt(b, d+1, "evictionTimestamp", l.EvictionTimestamp)
	b = appendXMLInt(b, d+1, "serviceUpTimestamp", l.ServiceUpTimestamp)
	b = appendIndent(b, d)
	b = append(b, "</leaseInfo>\n"...)
	b = appendMetadataXML(b, d, i.Metadata, true)
	b = appendOptionalXML(b, d, "appGroupName", i.AppGroupName)
	b = appendOptionalXML(b, d, "homePageUrl", i.HomePageURL)
	b = appendOptionalXML(b, d, "statusPageUrl", i.StatusPageURL)
	b = appendOptionalXML(b, d, "healthCheckUrl", i.HealthCheckURL)
	b = appendOptionalXML(b, d, "secureHealthCheckUrl", i.SecureHealthCheckURL)
	b = appendOptionalXML(b, d, "vipAddress", i.VIPAddress)
	b = appendOptionalXML(b, d, "secureVipAddress", i.SecureVIPAddress)
	if i.IsCoordinatingDiscoveryServer {
		b = appendXMLElem(b, d, "isCoordinatingDiscoveryServer", "true")
	} else {
		b = appendXMLElem(b, d, "isCoordinatingDiscoveryServer", "false")
	}
	b = appendXMLInt(b, d, "lastUpdatedTimestamp", i.LastUpdatedTimestamp)
	b = appendXMLInt(b, d, "lastDirtyTimestamp", i.LastDirtyTimestamp)
	if i.ActionType != ActionNone {
		b = appendXMLElem(b, d, "actionType", i.ActionType.String())
	}
	b = appendOptionalXML(b, d, "asgName", i.ASGName)
	b = appendIndent(b, depth)
	b = append(b, "</instance>"...)
	if depth > 0 {
		b = append(b, '\n')
	}
	return b
}

func appendPortXML(b []byte, depth int, name string, p Port) []byte {
	b = appendIndent(b, depth)
	b = append(b, '<')
	b = append(b, name...)
	b = append(b, ` enabled="`...)
	b = strconv.AppendBool(b, p.Enabled)
	b = append(b, `">`...)
	b = strconv.AppendInt(b, int64(p.Number), 10)
	b = append(b, "</"...)
	b = append(b, name...)
	return append(b, ">\n"...)
}

func appendDataCenterXML(b []byte, depth int, dc *DataCenterInfo) []byte {
	b = appendIndent(b, depth)
	if dc.IsAmazon() {
		b = append(b, `<dataCenterInfo class="com.netflix.appinfo.AmazonInfo">`+"\n"...)
		b = appendXMLElem(b, depth+1, "name", DataCenterAmazon)
		b = appendMetadataXML(b, depth+1, dc.Metadata, false)
	} else {
		b = append(b, `<dataCenterInfo class="com.netflix.appinfo.InstanceInfo$DefaultDataCenterInfo">`+"\n"...)
		b = appendXMLElem(b, depth+1, "name", dc.Name)
	}
	b = appendIndent(b, depth)
	return append(b, "</dataCenterInfo>\n"...)
}

// appendMetadataXML writes one element per key. Keys that cannot be made
// into an XML name are left out: writing them would break the document.
func appendMetadataXML(b []byte, depth int, m map[string]string, emptyMarker bool) []byte {
	b = appendIndent(b, depth)
	if len(m) == 0 {
		if emptyMarker {
			return append(b, `<metadata class="java.util.Collections$EmptyMap"/>`+"\n"...)
		}
		return append(b, "<metadata/>\n"...)
	}
	b = append(b, "<metadata>\n"...)
	for _, k := range sortedKeys(m) {
		name, ok := EscapeXMLName(k)
		if !ok {
			continue
		}
		b = appendXMLElem(b, depth+1, name, m[k])
	}
	b = appendIndent(b, depth)
	return append(b, "</metadata>\n"...)
}

func appendOptionalXML(b []byte, depth int, name, v string) []byte {
	if v == "" {
		return b
	}
	return appendXMLElem(b, depth, name, v)
}

func appendXMLElem(b []byte, depth int, name, text string) []byte {
	b = appendIndent(b, depth)
	b = append(b, '<')
	b = append(b, name...)
	b = append(b, '>')
	b = AppendXMLText(b, text)
	b = append(b, "</"...)
	b = append(b, name...)
	return append(b, ">\n"...)
}

func appendXMLInt(b []byte, depth int, name string, v int64) []byte {
	b = appendIndent(b, depth)
	b = append(b, '<')
	b = append(b, name...)
	b = append(b, '>')
	b = strconv.AppendInt(b, v, 10)
	b = append(b, "</"...)
	b = append(b, name...)
	return append(b, ">\n"...)
}

func appendIndent(b []byte, depth int) []byte {
	for range depth {
		b = append(b, ' ', ' ')
	}
	return b
}

// xmlEscapes are the references XStream's PrettyPrintWriter writes for
// ASCII characters.
var xmlEscapes = [utf8.RuneSelf]string{'&': "&amp;", '<': "&lt;", '>': "&gt;", '"': "&quot;", '\'': "&apos;", '\r': "&#xd;"}

// AppendXMLText appends s escaped as XStream's PrettyPrintWriter escapes
// text. Characters XML 1.0 cannot carry are written as U+FFFD.
func AppendXMLText(b []byte, s string) []byte {
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c < utf8.RuneSelf && c != '&' && c != '<' && c != '>' && c != '"' && c != '\'' {
			i++
			continue
		}
		b = append(b, s[start:i]...)
		r, size := rune(c), 1
		if c >= utf8.RuneSelf {
			r, size = utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && size == 1 {
				r = utf8.RuneError
			}
		}
		switch {
		case r < utf8.RuneSelf && xmlEscapes[r] != "":
			b = append(b, xmlEscapes[r]...)
		case r == '\t' || r == '\n':
			b = append(b, byte(r))
		case r < 0x20 || r == utf8.RuneError || r == 0xFFFE || r == 0xFFFF:
			b = append(b, "\ufffd"...)
		default:
			b = append(b, s[i:i+size]...)
		}
		i += size
		start = i
	}
	return append(b, s[start:]...)
}

// EscapeXMLName turns a metadata key into an element name the way XStream
// does ("_" becomes "__", "$" becomes "_-"). It reports false for keys that
// are not valid XML names even after escaping.
func EscapeXMLName(key string) (string, bool) {
	if key == "" {
		return "", false
	}
	var out []byte
	for n, r := range key {
		switch {
		case r == '_':
			out = append(out, '_', '_')
		case r == '$':
			out = append(out, '_', '-')
		case isXMLNameStart(r) || (n > 0 && isXMLNameChar(r)):
			out = utf8.AppendRune(out, r)
		default:
			return "", false
		}
	}
	return string(out), true
}

// UnescapeXMLName reverses EscapeXMLName.
func UnescapeXMLName(name string) string {
	return string(appendUnescapedName(make([]byte, 0, len(name)), name))
}

// appendUnescapedName appends name with EscapeXMLName's escapes undone.
func appendUnescapedName[T string | []byte](b []byte, name T) []byte {
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

func isXMLNameStart(r rune) bool {
	return r == '_' || (r >= 'A' && r <= 'Z') || (r >= 'a' && r <= 'z') ||
		(r >= 0xC0 && r <= 0xD6) || (r >= 0xD8 && r <= 0xF6) || (r >= 0xF8 && r <= 0x2FF) ||
		(r >= 0x370 && r <= 0x37D) || (r >= 0x37F && r <= 0x1FFF) || (r >= 0x200C && r <= 0x200D) ||
		(r >= 0x2070 && r <= 0x218F) || (r >= 0x2C00 && r <= 0x2FEF) || (r >= 0x3001 && r <= 0xD7FF) ||
		(r >= 0xF900 && r <= 0xFDCF) || (r >= 0xFDF0 && r <= 0xFFFD) || (r >= 0x10000 && r <= 0xEFFFF)
}

func isXMLNameChar(r rune) bool {
	return isXMLNameStart(r) || r == '-' || r == '.' || (r >= '0' && r <= '9') || r == 0xB7 ||
		(r >= 0x300 && r <= 0x36F) || (r >= 0x203F && r <= 0x2040)
}
