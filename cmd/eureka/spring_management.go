package main

import (
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"

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
	p, err := s.pair("management.server.port", "management.server.address")
	switch {
	case err != nil:
		return err
	case !p.hasA && p.hasB:
		s.notes = append(s.notes, fmt.Sprintf("%s: %s: ignored (no effect here: without management.server.port the endpoints are on the registry's server)", p.b.Source, p.b.Name))
		return nil
	case !p.hasA:
		return nil
	}
	port, err := portOf(p.a, "no endpoint")
	if err != nil {
		return err
	}
	if port == -1 {
		s.add("actuator", "off", p.a)
		return nil
	}
	host := ""
	if p.hasB {
		host = strings.TrimSpace(p.b.Value)
	}
	s.assign = append(s.assign, assignment{flag: "management-addr", value: net.JoinHostPort(host, strconv.Itoa(port)), from: p.from(), arg: p.arg()})
	return nil
}
