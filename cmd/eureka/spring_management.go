package main

import (
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"

	"github.com/eurekagate/eurekagate/internal/springconfig"
	"github.com/eurekagate/eurekagate/registry/actuator"
)

// management maps management.endpoints.web.exposure.include and
// .exclude to -actuator, and management.server.port and .address to
// -management-addr.
func (s *springSettings) management() error {
	include, src, ok, err := s.conf.List("management.endpoints.web.exposure.include")
	if err != nil {
		return err
	}
	exclude, xsrc, hasExclude, err := s.conf.List("management.endpoints.web.exposure.exclude")
	if err != nil {
		return err
	}
	if ok || hasExclude {
		if !ok {
			include, src = []string{"health"}, xsrc
		}
		var served []string
		var from []string
		for _, e := range include {
			switch {
			case e == "*":
				served = append(served, actuator.Endpoints...)
			case slices.Contains(actuator.Endpoints, e):
				served = append(served, e)
			default:
				s.notes = append(s.notes, fmt.Sprintf("%s: management.endpoints.web.exposure.include: %s: ignored (no effect here: this server has no %s endpoint; it serves %s)", src, e, e, strings.Join(actuator.Endpoints, ", ")))
			}
		}
		from = append(from, fmt.Sprintf("%s management.endpoints.web.exposure.include", src))
		if hasExclude {
			from = append(from, fmt.Sprintf("%s management.endpoints.web.exposure.exclude", xsrc))
		}
		served = slices.DeleteFunc(slices.Compact(served), func(e string) bool { return slices.Contains(exclude, e) || slices.Contains(exclude, "*") })
		v := strings.Join(served, ",")
		if v == "" {
			v = "off"
		}
		s.assign = append(s.assign, assignment{flag: "actuator", value: v, from: strings.Join(from, ", "), arg: src.Arg != "" || xsrc.Arg != ""})
	}
	port, hasPort, err := s.lookup("management.server.port")
	if err != nil {
		return err
	}
	addr, hasAddr, err := s.lookup("management.server.address")
	if err != nil {
		return err
	}
	if !hasPort {
		if hasAddr {
			s.notes = append(s.notes, fmt.Sprintf("%s: %s: ignored (no effect here: without management.server.port the endpoints are on the registry's server)", addr.Source, addr.Name))
		}
		return nil
	}
	n, err := strconv.Atoi(strings.TrimSpace(port.Value))
	if err != nil || n < -1 || n > 65535 {
		return fmt.Errorf("%s: %s: %q is not a port (0 to 65535, or -1 for no endpoint)", port.Source, port.Name, port.Value)
	}
	if n == -1 {
		s.add("actuator", "off", port)
		return nil
	}
	host := ""
	if hasAddr {
		host = strings.TrimSpace(addr.Value)
	}
	s.assign = append(s.assign, assignment{flag: "management-addr", value: net.JoinHostPort(host, strconv.Itoa(n)), from: sources(port, addr, hasAddr), arg: port.Source.Arg != "" || addr.Source.Arg != ""})
	return nil
}

// sources names where a setting made of two properties came from.
func sources(a, b springconfig.Property, hasB bool) string {
	from := fmt.Sprintf("%s %s", a.Source, a.Name)
	if hasB {
		from += fmt.Sprintf(", %s %s", b.Source, b.Name)
	}
	return from
}
