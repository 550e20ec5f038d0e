package caddymodule

import (
	"github.com/samber/lo"

	"github.com/eurekagate/eurekagate/eureka"
)

type registryApp struct {
	name     string
	count    int
	byStatus map[string]int
}

// appsOf counts each application's instances by status.
func appsOf(apps []*eureka.Application) []*registryApp {
	return lo.Map(apps, func(a *eureka.Application, _ int) *registryApp {
		return &registryApp{
			name:  a.Name,
			count: len(a.Instances),
			byStatus: lo.CountValuesBy(a.Instances, func(i *eureka.InstanceInfo) string {
				return i.Status.String()
			}),
		}
	})
}
