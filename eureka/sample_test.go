package eureka

import "strconv"

// benchInstance is the n-th of a family of Spring-shaped registrations,
// shaped as testkit.SampleInstance (which this package cannot import), with
// the fields a server fills in when it serves them.
func benchInstance(n int) *InstanceInfo {
	app := "SERVICE-" + strconv.Itoa(n/20)
	host := "host-" + strconv.Itoa(n) + ".example.internal"
	port := 8000 + n%1000
	base := "http://" + host + ":" + strconv.Itoa(port)
	lower := "service-" + strconv.Itoa(n/20)
	return &InstanceInfo{
		InstanceID: host + ":" + lower + ":" + strconv.Itoa(port), HasInstanceID: true,
		HostName: host, App: app, IPAddr: "10." + strconv.Itoa(n>>16&255) + "." + strconv.Itoa(n>>8&255) + "." + strconv.Itoa(n&255),
		SID: "na", Status: StatusUp,
		Port: Port{Number: port, Enabled: true}, SecurePort: Port{Number: 443}, CountryID: 1,
		DataCenterInfo: DataCenterInfo{Name: DataCenterMyOwn},
		LeaseInfo: LeaseInfo{RenewalIntervalInSecs: 30, DurationInSecs: 90,
			RegistrationTimestamp: 1718000000000 + int64(n), LastRenewalTimestamp: 1718000090000 + int64(n),
			ServiceUpTimestamp: 1718000000000 + int64(n)},
		Metadata:    map[string]string{"management.port": strconv.Itoa(port), "zone": "zone-" + strconv.Itoa(n%3)},
		HomePageURL: base + "/", StatusPageURL: base + "/actuator/info", HealthCheckURL: base + "/actuator/health",
		VIPAddress: lower, SecureVIPAddress: lower,
		LastUpdatedTimestamp: 1718000000000 + int64(n), LastDirtyTimestamp: 1718000000000 + int64(n),
		ActionType: ActionAdded,
	}
}

// benchRegistry is a full registry of n benchInstances, twenty per
// application, as a server serves it.
func benchRegistry(n int) *Applications {
	apps := &Applications{VersionsDelta: 1}
	var a *Application
	for k := range n {
		i := benchInstance(k)
		if a == nil || a.Name != i.App {
			a = &Application{Name: i.App}
			apps.Applications = append(apps.Applications, a)
		}
		a.Instances = append(a.Instances, i)
	}
	apps.AppsHashcode = ReconcileHash(apps.Applications)
	return apps
}
