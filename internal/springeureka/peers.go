package springeureka

import (
	"fmt"
	"strings"

	"github.com/eurekagate/eurekagate/internal/springconfig"
	"github.com/eurekagate/eurekagate/registry"
)

// peers maps eureka.client.service-url to -peers as the Java server
// reads its peers: the URLs of the zones eureka.client.availability-zones
// lists for this region, defaultZone's for a zone without URLs of its
// own, or defaultZone's alone without a list, each ending in a slash.
// Self-recognition takes eureka.instance.hostname.
func (s *Settings) peers() error {
	host, ok, err := s.lookup("eureka.instance.hostname")
	if err != nil {
		return err
	}
	if ok {
		s.SelfHost = strings.TrimSpace(host.Value)
	}
	region := registry.DefaultRegion
	if r, ok, err := s.lookup("eureka.client.region"); err != nil {
		return err
	} else if ok {
		region = strings.TrimSpace(r.Value)
	}
	zones, _, hasZones, err := s.Conf.List("eureka.client.availability-zones." + region)
	if err != nil {
		return err
	}
	if !hasZones || len(zones) == 0 {
		zones = []string{"defaultZone"}
	}
	entries := s.Conf.Map("eureka.client.service-url")
	byZone := map[string]springconfig.Entry{}
	for _, e := range entries {
		byZone[springconfig.Canonical(e.Key)] = e
	}
	used := map[string]bool{}
	var urls, from []string
	arg := false
	for _, z := range zones {
		e, ok := byZone[springconfig.Canonical(z)]
		if !ok {
			e, ok = byZone[springconfig.Canonical("defaultZone")]
		}
		if !ok || used[springconfig.Canonical(e.Key)] {
			continue
		}
		used[springconfig.Canonical(e.Key)] = true
		list, src, _, err := s.Conf.List(e.Property.Name)
		if err != nil {
			return err
		}
		for _, u := range list {
			if !strings.HasSuffix(u, "/") {
				u += "/"
			}
			urls = append(urls, u)
		}
		from = append(from, fmt.Sprintf("%s %s", src, e.Property.Name))
		arg = arg || src.Arg != ""
	}
	for _, e := range entries {
		if !used[springconfig.Canonical(e.Key)] {
			s.Notes = append(s.Notes, fmt.Sprintf("%s: %s: ignored (no effect here: zone %s is not among eureka.client.availability-zones.%s, %v; the Java server does not read it either)",
				e.Property.Source, e.Property.Name, e.Key, region, zones))
		}
	}
	if len(urls) > 0 {
		s.Assign = append(s.Assign, Assignment{Setting: "peers", Value: strings.Join(urls, ","), From: strings.Join(from, ", "), Arg: arg})
	}
	return nil
}

// remoteRegions maps eureka.server.remote-region-urls-with-name to
// -remote-regions and eureka.server.remote-region-app-whitelist to
// -remote-region-apps.
func (s *Settings) remoteRegions() error {
	var remotes, from []string
	arg := false
	for _, e := range s.Conf.Map("eureka.server.remote-region-urls-with-name") {
		p, _, err := s.lookup(e.Property.Name)
		if err != nil {
			return err
		}
		remotes = append(remotes, e.Key+"="+strings.TrimSpace(p.Value))
		from = append(from, fmt.Sprintf("%s %s", p.Source, p.Name))
		arg = arg || p.Source.Arg != ""
	}
	if len(remotes) > 0 {
		s.Assign = append(s.Assign, Assignment{Setting: "remote-regions", Value: strings.Join(remotes, ","), From: strings.Join(from, ", "), Arg: arg})
	}
	for _, e := range s.Conf.Map("eureka.server.remote-region-app-whitelist") {
		name := e.Property.Name
		if i := strings.IndexByte(name, '['); i >= 0 {
			name = name[:i]
		}
		apps, src, _, err := s.Conf.List(name)
		if err != nil {
			return err
		}
		s.Assign = append(s.Assign, Assignment{Setting: "remote-region-apps", Value: e.Key + "=" + strings.Join(apps, ","), From: fmt.Sprintf("%s %s", src, name), Arg: src.Arg != ""})
	}
	return nil
}

// ssl maps server.ssl.*: the PEM certificate and key, and client-auth
// need with its trust certificate. Key and trust stores are refused with
// the way to the PEM files, rather than served without them.
func (s *Settings) ssl() error {
	props := s.Conf.Map("server.ssl")
	if len(props) == 0 {
		return nil
	}
	if p, ok, err := s.lookup("server.ssl.enabled"); err != nil {
		return err
	} else if ok {
		v, err := convert(boolean, p.Value)
		if err != nil {
			return fmt.Errorf("%s: %s: %v", p.Source, p.Name, err)
		}
		if v == "false" {
			for _, e := range props {
				if springconfig.Canonical(e.Key) != "enabled" {
					s.Notes = append(s.Notes, fmt.Sprintf("%s: %s: ignored (no effect here: server.ssl.enabled is false)", e.Property.Source, e.Property.Name))
				}
			}
			return nil
		}
	}
	for _, e := range props {
		switch k := springconfig.Canonical(e.Key); {
		case strings.HasPrefix(k, "keystore"), k == "keyalias", k == "keypassword":
			return fmt.Errorf("%s: %s: key stores are not read here; give server.ssl.certificate and server.ssl.certificate-private-key as PEM files (openssl pkcs12 -in store.p12 -nodes writes both)", e.Property.Source, e.Property.Name)
		case strings.HasPrefix(k, "truststore"):
			return fmt.Errorf("%s: %s: trust stores are not read here; give server.ssl.trust-certificate as a PEM file", e.Property.Source, e.Property.Name)
		}
	}
	for name, flagName := range map[string]string{"server.ssl.certificate": "tls-cert", "server.ssl.certificate-private-key": "tls-key"} {
		if p, ok, err := s.lookup(name); err != nil {
			return err
		} else if ok {
			s.add(flagName, strings.TrimPrefix(strings.TrimSpace(p.Value), "file:"), p)
		}
	}
	p, err := s.pair("server.ssl.trust-certificate", "server.ssl.client-auth")
	if err != nil {
		return err
	}
	trust, hasTrust, auth, hasAuth := p.a, p.hasA, p.b, p.hasB
	mode := "none"
	if hasAuth {
		mode = strings.ToLower(strings.TrimSpace(auth.Value))
	}
	switch mode {
	case "need":
		if !hasTrust {
			return fmt.Errorf("%s: %s: need without server.ssl.trust-certificate, the CA the clients' certificates must chain to", auth.Source, auth.Name)
		}
		s.add("tls-client-ca", strings.TrimPrefix(strings.TrimSpace(trust.Value), "file:"), trust)
	case "none":
		if hasTrust {
			s.Notes = append(s.Notes, fmt.Sprintf("%s: %s: ignored (no effect here: clients' certificates are asked for with server.ssl.client-auth: need only)", trust.Source, trust.Name))
		}
	case "want":
		return fmt.Errorf("%s: %s: want is not offered here (a client without a certificate would pass unverified); give need or none", auth.Source, auth.Name)
	default:
		return fmt.Errorf("%s: %s: %q is not need, want or none", auth.Source, auth.Name, auth.Value)
	}
	return nil
}
