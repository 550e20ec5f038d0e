package eureka

import "strings"

// Zone is the zone i says it is in: Amazon's availability zone, else the
// "zone" metadata Spring Cloud instances register; "" when it names none.
func (i *InstanceInfo) Zone() string {
	if i.DataCenterInfo.IsAmazon() {
		if z := strings.TrimSpace(i.DataCenterInfo.Metadata["availability-zone"]); z != "" {
			return z
		}
	}
	return strings.TrimSpace(i.Metadata["zone"])
}
