package testkit

import (
	"strings"

	"github.com/eurekagate/eurekagate/eureka"
	"github.com/eurekagate/eurekagate/internal/fixture"
)

// Inst is fixture.Inst: a valid registration of app/id on
// 127.0.0.1:8080, UP, with lastDirtyTimestamp 1000 and a 90 s lease.
func Inst(app, id string) *eureka.InstanceInfo { return fixture.Inst(app, id) }

// SpringInst is Inst with the VIPs Spring Cloud registers: its app's
// name in lower case (spring.application.name), which an account bound
// to the app may name (a bound account's VIPs are its apps').
func SpringInst(app, id string) *eureka.InstanceInfo {
	i := fixture.Inst(app, id)
	i.VIPAddress, i.SecureVIPAddress = strings.ToLower(app), strings.ToLower(app)
	return i
}

// SampleInstance is fixture.SampleInstance: the n-th of a family of
// Spring Boot-shaped registrations, twenty instances per application.
func SampleInstance(n int) *eureka.InstanceInfo { return fixture.SampleInstance(n) }
