package testkit

import (
	"strconv"

	"github.com/eurekagate/eurekagate/eureka"
)

// SampleInstance returns the n-th of a family of registrations shaped like
// Spring Boot's (id host:app:port, URLs, VIPs, two metadata keys), twenty
// instances per application. Benchmarks and the load command use it.
func SampleInstance(n int) *eureka.InstanceInfo {
	app := "SERVICE-" + strconv.Itoa(n/20)
	host := "host-" + strconv.Itoa(n) + ".example.internal"
	port := 8000 + n%1000
	base := "http://" + host + ":" + strconv.Itoa(port)
	lower := "service-" + strconv.Itoa(n/20)
	return &eureka.InstanceInfo{
		InstanceID: host + ":" + lower + ":" + strconv.Itoa(port), HasInstanceID: true,
		HostName: host, App: app, IPAddr: "10." + strconv.Itoa(n>>16&255) + "." + strconv.Itoa(n>>8&255) + "." + strconv.Itoa(n&255),
		SID: "na", Status: eureka.StatusUp,
		Port: eureka.Port{Number: port, Enabled: true}, SecurePort: eureka.Port{Number: 443}, CountryID: 1,
		DataCenterInfo: eureka.DataCenterInfo{Name: eureka.DataCenterMyOwn},
		LeaseInfo:      eureka.LeaseInfo{RenewalIntervalInSecs: 30, DurationInSecs: 90},
		Metadata:       map[string]string{"management.port": strconv.Itoa(port), "zone": "zone-" + strconv.Itoa(n%3)},
		HomePageURL:    base + "/", StatusPageURL: base + "/actuator/info", HealthCheckURL: base + "/actuator/health",
		VIPAddress: lower, SecureVIPAddress: lower, LastDirtyTimestamp: 1718000000000 + int64(n),
	}
}
