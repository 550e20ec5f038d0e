package eureka

// ListID identifies a shared instance list without reading it: the
// registry and the discovery client hand out a new slice when an app's
// instances change and the same one until then, so two lists with the
// same ListID are the same instances. Every empty list has the zero
// ListID. The xDS server and the gRPC resolver tell changes by it.
type ListID struct {
	first **InstanceInfo
	n     int
}

// ListIDOf returns l's ListID.
func ListIDOf(l []*InstanceInfo) ListID {
	if len(l) == 0 {
		return ListID{}
	}
	return ListID{&l[0], len(l)}
}
