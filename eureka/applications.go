package eureka

import (
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Application is the instances registered under one application name.
type Application struct {
	Name      string
	Instances []*InstanceInfo
}

// Applications is a registry document: a full registry, a delta or a VIP
// query result.
type Applications struct {
	// VersionsDelta is "1" for a full fetch, the delta counter for a delta,
	// and -1 for VIP queries (and for documents that carried none).
	VersionsDelta int64
	// AppsHashcode is the reconcile hash; see ReconcileHash.
	AppsHashcode string
	Applications []*Application
}

// StatusCounts counts instances per status.
type StatusCounts [len(statusNames)]int

// Add counts one instance with status s.
func (c *StatusCounts) Add(s Status) {
	if int(s) < len(c) {
		c[s]++
	}
}

// Hash renders the counts as Eureka's reconcile hash.
func (c *StatusCounts) Hash() string {
	var b []byte
	for _, s := range hashOrder {
		if c[s] > 0 {
			b = append(b, statusNames[s]...)
			b = append(b, '_')
			b = strconv.AppendInt(b, int64(c[s]), 10)
			b = append(b, '_')
		}
	}
	return string(b)
}

// ReconcileHash is the apps__hashcode of the instances in apps: for each
// status that occurs, in alphabetical order of the names, "<STATUS>_<count>_".
// Three UP and one DOWN give "DOWN_1_UP_3_"; no instances give "".
func ReconcileHash(apps []*Application) string {
	var c StatusCounts
	for _, a := range apps {
		for _, i := range a.Instances {
			c.Add(i.Status)
		}
	}
	return c.Hash()
}

// SortByName orders applications by name and each application's instances
// by id. The protocol fixes no order; a stable one makes payloads
// reproducible and lets balancers keep a stable rotation.
func SortByName(apps []*Application) {
	sort.Slice(apps, func(i, j int) bool { return apps[i].Name < apps[j].Name })
	for _, a := range apps {
		SortInstances(a.Instances)
	}
}

// SortInstances orders instances by id.
func SortInstances(list []*InstanceInfo) {
	slices.SortFunc(list, func(a, b *InstanceInfo) int { return strings.Compare(a.ID(), b.ID()) })
}
