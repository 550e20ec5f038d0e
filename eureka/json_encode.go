package eureka

import (
	"sort"
	"strconv"
	"unicode/utf8"
)

// The legacy JSON codec (EurekaJacksonCodec) writes fields in a fixed order,
// timestamps and isCoordinatingDiscoveryServer as strings, leaseInfo and
// countryId as numbers and "@enabled" as a string. The appenders below write
// exactly that, without reflection, so payloads for large registries are
// cheap to rebuild.

// AppendInstanceJSON appends {"instance":{...}} to b.
func AppendInstanceJSON(b []byte, i *InstanceInfo) []byte {
	b = append(b, `{"instance":`...)
	b = AppendInstanceJSONBody(b, i)
	return append(b, '}')
}

// AppendApplicationJSON appends {"application":{...}} to b.
func AppendApplicationJSON(b []byte, a *Application) []byte {
	b = append(b, `{"application":`...)
	b = appendApplicationJSONBody(b, a)
	return append(b, '}')
}

// AppendApplicationsJSON appends {"applications":{...}} to b. Applications
// without instances are left out, as the Java server never emits them.
func AppendApplicationsJSON(b []byte, apps *Applications) []byte {
	b = append(b, `{"applications":{"versions__delta":`...)
	b = appendQuotedInt(b, apps.VersionsDelta)
	b = append(b, `,"apps__hashcode":`...)
	b = AppendJSONString(b, apps.AppsHashcode)
	b = append(b, `,"application":[`...)
	first := true
	for _, a := range apps.Applications {
		if len(a.Instances) == 0 {
			continue
		}
		if !first {
			b = append(b, ',')
		}
		first = false
		b = appendApplicationJSONBody(b, a)
	}
	return append(b, "]}}"...)
}

func appendApplicationJSONBody(b []byte, a *Application) []byte {
	b = append(b, `{"name":`...)
	b = AppendJSONString(b, a.Name)
	b = append(b, `,"instance":[`...)
	for n, i := range a.Instances {
		if n > 0 {
			b = append(b, ',')
		}
		b = AppendInstanceJSONBody(b, i)
	}
	return append(b, "]}"...)
}

// AppendInstanceJSONBody appends the InstanceInfo object without the
// "instance" wrapper, as peer replication documents nest it.
func AppendInstanceJSONBody(b []byte, i *InstanceInfo) []byte {
	b = append(b, '{')
	if i.HasInstanceID {
		b = append(b, `"instanceId":`...)
		b = AppendJSONString(b, i.InstanceID)
		b = append(b, ',')
	}
	b = append(b, `"hostName":`...)
	b = AppendJSONString(b, i.HostName)
	b = append(b, `,"app":`...)
	b = AppendJSONString(b, i.App)
	b = append(b, `,"ipAddr":`...)
	b = AppendJSONString(b, i.IPAddr)
	if i.SID != "" && i.SID != "na" && i.SID != "unknown" {
		b = append(b, `,"sid":`...)
		b = AppendJSONString(b, i.SID)
	}
	b = append(b, `,"status":"`...)
	b = append(b, i.Status.String()...)
	b = append(b, `","overriddenStatus":"`...)
	b = append(b, i.OverriddenStatus.String()...)
	b = append(b, `","port":`...)
	b = appendPortJSON(b, i.Port)
	b = append(b, `,"securePort":`...)
	b = appendPortJSON(b, i.SecurePort)
	b = append(b, `,"countryId":`...)
	b = strconv.AppendInt(b, int64(i.CountryID), 10)
	b = append(b, `,"dataCenterInfo":`...)
	b = appendDataCenterJSON(b, &i.DataCenterInfo)
	b = append(b, `,"leaseInfo":{"renewalIntervalInSecs":`...)
	l := &i.LeaseInfo
	b = strconv.AppendInt(b, int64(l.RenewalIntervalInSecs), 10)
	b = append(b, `,"durationInSecs":`...)
	b = strconv.AppendInt(b, int64(l.DurationInSecs), 10)
	b = append(b, `,"registrationTimestamp":`...)
	b = strconv.AppendInt(b, l.RegistrationTimestamp, 10)
	b = append(b, `,"lastRenewalTimestamp":`...)
	b = strconv.AppendInt(b, l.LastRenewalTimestamp, 10)
	b = append(b, `,"evictionTimestamp":`...)
	b = strconv.AppendInt(b, l.EvictionTimestamp, 10)
	b = append(b, `,"serviceUpTimestamp":`...)
	b = strconv.AppendInt(b, l.ServiceUpTimestamp, 10)
	b = append(b, `},"metadata":`...)
	if len(i.Metadata) == 0 {
		b = append(b, `{"@class":"java.util.Collections$EmptyMap"}`...)
	} else {
		b = appendStringMapJSON(b, i.Metadata)
	}
	b = appendOptionalJSON(b, "appGroupName", i.AppGroupName)
	b = appendOptionalJSON(b, "homePageUrl", i.HomePageURL)
	b = appendOptionalJSON(b, "statusPageUrl", i.StatusPageURL)
	b = appendOptionalJSON(b, "healthCheckUrl", i.HealthCheckURL)
	b = appendOptionalJSON(b, "secureHealthCheckUrl", i.SecureHealthCheckURL)
	b = appendOptionalJSON(b, "vipAddress", i.VIPAddress)
	b = appendOptionalJSON(b, "secureVipAddress", i.SecureVIPAddress)
	if i.IsCoordinatingDiscoveryServer {
		b = append(b, `,"isCoordinatingDiscoveryServer":"true"`...)
	} else {
		b = append(b, `,"isCoordinatingDiscoveryServer":"false"`...)
	}
	b = append(b, `,"lastUpdatedTimestamp":`...)
	b = appendQuotedInt(b, i.LastUpdatedTimestamp)
	b = append(b, `,"lastDirtyTimestamp":`...)
	b = appendQuotedInt(b, i.LastDirtyTimestamp)
	if i.ActionType != ActionNone {
		b = append(b, `,"actionType":"`...)
		b = append(b, i.ActionType.String()...)
		b = append(b, '"')
	}
	b = appendOptionalJSON(b, "asgName", i.ASGName)
	return append(b, '}')
}

func appendPortJSON(b []byte, p Port) []byte {
	b = append(b, `{"$":`...)
	b = strconv.AppendInt(b, int64(p.Number), 10)
	if p.Enabled {
		return append(b, `,"@enabled":"true"}`...)
	}
	return append(b, `,"@enabled":"false"}`...)
}

func appendDataCenterJSON(b []byte, d *DataCenterInfo) []byte {
	if d.IsAmazon() {
		b = append(b, `{"@class":"com.netflix.appinfo.AmazonInfo","name":"Amazon","metadata":`...)
		b = appendStringMapJSON(b, d.Metadata)
		return append(b, '}')
	}
	b = append(b, `{"@class":"com.netflix.appinfo.InstanceInfo$DefaultDataCenterInfo","name":`...)
	b = AppendJSONString(b, d.Name)
	return append(b, '}')
}

func appendOptionalJSON(b []byte, key, v string) []byte {
	if v == "" {
		return b
	}
	b = append(b, ',', '"')
	b = append(b, key...)
	b = append(b, '"', ':')
	return AppendJSONString(b, v)
}

func appendQuotedInt(b []byte, v int64) []byte {
	b = append(b, '"')
	b = strconv.AppendInt(b, v, 10)
	return append(b, '"')
}

// appendStringMapJSON writes a map with its keys sorted, so equal registries
// give equal bytes.
func appendStringMapJSON(b []byte, m map[string]string) []byte {
	b = append(b, '{')
	for n, k := range sortedKeys(m) {
		if n > 0 {
			b = append(b, ',')
		}
		b = AppendJSONString(b, k)
		b = append(b, ':')
		b = AppendJSONString(b, m[k])
	}
	return append(b, '}')
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

const hexDigits = "0123456789ABCDEF"

// AppendJSONString appends s as a JSON string the way Jackson writes it:
// only '"', '\\' and control characters are escaped; '/', '<', '>' and '&'
// and non-ASCII text are written as they are. Invalid UTF-8 becomes U+FFFD.
func AppendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && c < utf8.RuneSelf {
			i++
			continue
		}
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && size == 1 {
				b = append(b, s[start:i]...)
				b = append(b, "\ufffd"...)
				i++
				start = i
				continue
			}
			i += size
			continue
		}
		b = append(b, s[start:i]...)
		switch c {
		case '"', '\\':
			b = append(b, '\\', c)
		case '\n':
			b = append(b, '\\', 'n')
		case '\r':
			b = append(b, '\\', 'r')
		case '\t':
			b = append(b, '\\', 't')
		case '\b':
			b = append(b, '\\', 'b')
		case '\f':
			b = append(b, '\\', 'f')
		default:
			b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
		}
		i++
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
