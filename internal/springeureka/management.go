package springeureka

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
func (s *Settings) management() error {
	include, src, ok, err := s.Conf.List("management.endpoints.web.exposure.include")
	if err != nil {
		return err
	}
	exclude, xsrc, hasExclude, err := s.Conf.List("management.endpoints.web.exposure.exclude")
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
			if names, err := actuator.Exposed(e); err == nil {
				served = append(served, names...)
			} else {
				s.Notes = append(s.Notes, fmt.Sprintf("%s: management.endpoints.web.exposure.include: %s: ignored (no effect here: this server has no %s endpoint; it serves %s)", src, e, e, strings.Join(actuator.Endpoints, ", ")))
			}
		}
		from = append(from, fmt.Sprintf("%s management.endpoints.web.exposure.include", src))
		if hasExclude {
			from = append(from, fmt.Sprintf("%s management.endpoints.web.exposure.exclude", xsrc))
		}
		served = slices.DeleteFunc(unique(served), func(e string) bool { return slices.Contains(exclude, e) || slices.Contains(exclude, "*") })
		v := strings.Join(served, ",")
		if v == "" {
			v = "off"
		}
		s.Assign = append(s.Assign, Assignment{Setting: "actuator", Value: v, From: strings.Join(from, ", "), Arg: src.Arg != "" || xsrc.Arg != ""})
	}
	p, err := s.pair("management.server.port", "management.server.address")
	switch {
	case err != nil:
		return err
	case !p.hasA && p.hasB:
		s.Notes = append(s.Notes, fmt.Sprintf("%s: %s: ignored (no effect here: without management.server.port the endpoints are on the registry's server)", p.b.Source, p.b.Name))
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
	s.Assign = append(s.Assign, Assignment{Setting: "management-addr", Value: net.JoinHostPort(host, strconv.Itoa(port)), From: p.from(), Arg: p.arg()})
	return nil
}

// unique returns list without repeats, in the order each came first
// (slices.Compact drops only neighbours: info,* would keep info twice).
func unique(list []string) []string {
	var out []string
	for k, e := range list {
		if !slices.Contains(list[:k], e) {
			out = append(out, e)
		}
	}
	return out
}
