package caddymodule

import "github.com/eurekagate/eurekagate/eureka"

type registryApp struct {
	name     string
	count    int
	byStatus map[string]int
}

// appsOf counts each application's instances by status.
func appsOf(apps []*eureka.Application) []*registryApp {
	out := make([]*registryApp, 0, len(apps))
	for _, a := range apps {
		ra := &registryApp{name: a.Name, byStatus: map[string]int{}}
		for _, i := range a.Instances {
			ra.byStatus[i.Status.String()]++
			ra.count++
		}
		out = append(out, ra)
	}
	return out
}
