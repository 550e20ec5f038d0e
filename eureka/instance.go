package eureka

import "strings"

// Default values the protocol gives to fields a registration leaves out.
const (
	// DefaultRenewalIntervalInSecs is the client's heartbeat interval when its
	// leaseInfo leaves it out or gives a value <= 0.
	DefaultRenewalIntervalInSecs = 30
	// DefaultDurationInSecs is the lease duration when leaseInfo leaves it
	// out or gives a value <= 0.
	DefaultDurationInSecs = 90
	// DefaultPort and DefaultSecurePort are the ports of a registration that
	// sends none.
	DefaultPort       = 7001
	DefaultSecurePort = 7002
)

// Data center names and the Java class names written for them.
const (
	DataCenterMyOwn   = "MyOwn"
	DataCenterAmazon  = "Amazon"
	DataCenterNetflix = "Netflix"

	// DefaultDataCenterClass is the "@class" written for every data center
	// that is not Amazon.
	DefaultDataCenterClass = "com.netflix.appinfo.InstanceInfo$DefaultDataCenterInfo"
	// AmazonDataCenterClass is the "@class" written for Amazon.
	AmazonDataCenterClass = "com.netflix.appinfo.AmazonInfo"
	// EmptyMapClass is the marker Java writes for an empty metadata map.
	EmptyMapClass = "java.util.Collections$EmptyMap"
)

// InstanceInfo is one registered instance of an application, with the
// fields of Eureka's InstanceInfo in their wire order.
//
// Optional string fields (URLs, VIPs, appGroupName, asgName) are omitted on
// the wire when empty. InstanceID is written whenever HasInstanceID is set,
// even when it is empty, so that an id registered as "" is echoed as "".
type InstanceInfo struct {
	InstanceID    string
	HasInstanceID bool

	HostName string
	App      string // upper case
	IPAddr   string
	SID      string // deprecated; "na" when unset

	Status           Status
	OverriddenStatus Status // StatusUnknown means no override

	Port       Port
	SecurePort Port
	CountryID  int

	DataCenterInfo DataCenterInfo
	LeaseInfo      LeaseInfo
	Metadata       map[string]string

	AppGroupName                  string
	HomePageURL                   string
	StatusPageURL                 string
	HealthCheckURL                string
	SecureHealthCheckURL          string
	VIPAddress                    string
	SecureVIPAddress              string
	IsCoordinatingDiscoveryServer bool
	LastUpdatedTimestamp          int64
	LastDirtyTimestamp            int64
	ActionType                    ActionType
	ASGName                       string
}

// Port is a port number and whether it is enabled.
type Port struct {
	Number  int
	Enabled bool
}

// DataCenterInfo says where an instance runs. Metadata is used only for
// Amazon, with keys such as "instance-id" and "availability-zone".
type DataCenterInfo struct {
	Name     string
	Metadata map[string]string
}

// IsAmazon reports whether the data center is Amazon's.
func (d DataCenterInfo) IsAmazon() bool { return d.Name == DataCenterAmazon }

// LeaseInfo is the lease part of an instance. Clients send the two
// intervals; the server fills in the timestamps (epoch milliseconds).
type LeaseInfo struct {
	RenewalIntervalInSecs int
	DurationInSecs        int
	RegistrationTimestamp int64
	LastRenewalTimestamp  int64
	EvictionTimestamp     int64
	ServiceUpTimestamp    int64
}

// Duration returns DurationInSecs, or DefaultDurationInSecs when it is <= 0.
func (l LeaseInfo) Duration() int {
	if l.DurationInSecs > 0 {
		return l.DurationInSecs
	}
	return DefaultDurationInSecs
}

// RenewalInterval returns RenewalIntervalInSecs, or
// DefaultRenewalIntervalInSecs when it is <= 0.
func (l LeaseInfo) RenewalInterval() int {
	if l.RenewalIntervalInSecs > 0 {
		return l.RenewalIntervalInSecs
	}
	return DefaultRenewalIntervalInSecs
}

// ID returns the instance's identity as both servers and clients derive it:
// InstanceID when it is not blank, else the Amazon "instance-id", else
// HostName.
func (i *InstanceInfo) ID() string {
	if strings.TrimSpace(i.InstanceID) != "" {
		return i.InstanceID
	}
	if i.DataCenterInfo.IsAmazon() {
		if id := i.DataCenterInfo.Metadata["instance-id"]; id != "" {
			return id
		}
	}
	return i.HostName
}

// Clone returns a copy of i that shares no maps with it.
func (i *InstanceInfo) Clone() *InstanceInfo {
	c := *i
	c.Metadata = cloneMap(i.Metadata)
	c.DataCenterInfo.Metadata = cloneMap(i.DataCenterInfo.Metadata)
	return &c
}

// HasVIP reports whether the comma-separated list holds vip exactly
// (case-sensitive, as the server matches).
func HasVIP(list, vip string) bool {
	for list != "" {
		entry, rest, _ := strings.Cut(list, ",")
		if entry == vip {
			return true
		}
		list = rest
	}
	return false
}

func cloneMap(m map[string]string) map[string]string {
	if m == nil {
		return nil
	}
	c := make(map[string]string, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}
