package eureka

import "strconv"

// DefaultGRPCPortKey is the metadata key grpc-spring-boot-starter
// registers a gRPC server's port under.
const DefaultGRPCPortKey = "gRPC_port"

// GRPCAddress is where a gRPC call to i goes: its ipAddr (else its
// hostName) and the port in its metadata under key when there is one,
// else its port when enabled, else its secure port when enabled. ok is
// false when the metadata's value is not a port number (1-65535) or i
// enables no port: a call there could only fail.
func (i *InstanceInfo) GRPCAddress(key string) (host string, port int, ok bool) {
	host = i.IPAddr
	if host == "" {
		host = i.HostName
	}
	if v, has := i.Metadata[key]; has {
		p, err := strconv.Atoi(v)
		return host, p, err == nil && p > 0 && p < 65536
	}
	switch {
	case i.Port.Enabled && i.Port.Number > 0:
		return host, i.Port.Number, true
	case i.SecurePort.Enabled && i.SecurePort.Number > 0:
		return host, i.SecurePort.Number, true
	}
	return host, 0, false
}
