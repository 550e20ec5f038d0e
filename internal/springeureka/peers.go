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
	return s.mapOfLists("eureka.server.remote-region-app-whitelist", "remote-region-apps", "")
}

// ssl maps server.ssl.*: the certificate and key (PEM, or a PKCS12 key
// store), and client-auth need with its trust certificate or store.
// server.ssl.enabled false leaves the rest unread, saying so.
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
	if err := s.keyStore(); err != nil {
		return err
	}
	trust, hasTrust, err := s.trustStore()
	if err != nil {
		return err
	}
	auth, hasAuth, err := s.lookup("server.ssl.client-auth")
	if err != nil {
		return err
	}
	mode := "none"
	if hasAuth {
		mode = strings.ToLower(strings.TrimSpace(auth.Value))
	}
	switch mode {
	case "need":
		if !hasTrust {
			return fmt.Errorf("%s: %s: need without server.ssl.trust-certificate or trust-store, the CA the clients' certificates must chain to", auth.Source, auth.Name)
		}
		s.Assign = append(s.Assign, trust...)
	case "none":
		if hasTrust {
			s.Notes = append(s.Notes, fmt.Sprintf("%s: ignored (no effect here: clients' certificates are asked for with server.ssl.client-auth: need only)", trust[0].From))
		}
	case "want":
		return fmt.Errorf("%s: %s: want is not offered here (a client without a certificate would pass unverified); give need or none", auth.Source, auth.Name)
	default:
		return fmt.Errorf("%s: %s: %q is not need, want or none", auth.Source, auth.Name, auth.Value)
	}
	return nil
}

// storeFile reads a key or trust store's file and type: a PKCS12 file
// (its type PKCS12, or none and not named .jks); JKS and classpath:
// resources are refused with the way to a file this server reads.
func (s *Settings) storeFile(file, kind string) (springconfig.Property, bool, error) {
	p, ok, err := s.lookup(file)
	if !ok || err != nil {
		return p, ok, err
	}
	p.Value = strings.TrimPrefix(strings.TrimSpace(p.Value), "file:")
	if strings.HasPrefix(p.Value, "classpath:") {
		return p, true, fmt.Errorf("%s: %s: a classpath: resource is inside the Java application; give the file's path", p.Source, p.Name)
	}
	typ, hasType, err := s.lookup(kind)
	if err != nil {
		return p, true, err
	}
	jks := strings.HasSuffix(strings.ToLower(p.Value), ".jks")
	if hasType {
		jks = !strings.EqualFold(strings.TrimSpace(typ.Value), "PKCS12")
	}
	if jks {
		return p, true, fmt.Errorf("%s: %s: only PKCS12 stores are read here; convert it with keytool -importkeystore -srckeystore %s -destkeystore store.p12 -deststoretype PKCS12", p.Source, p.Name, p.Value)
	}
	return p, true, nil
}

// keyStore maps server.ssl.certificate and certificate-private-key (PEM),
// or key-store and key-store-password (PKCS12), to -tls-cert, -tls-key
// and -tls-cert-password.
func (s *Settings) keyStore() error {
	store, hasStore, err := s.storeFile("server.ssl.key-store", "server.ssl.key-store-type")
	if err != nil {
		return err
	}
	pem, err := s.pair("server.ssl.certificate", "server.ssl.certificate-private-key")
	if err != nil {
		return err
	}
	if hasStore && pem.hasA {
		return fmt.Errorf("%s: %s: set with %s: give the key store or the PEM certificate", store.Source, store.Name, pem.a.Name)
	}
	if !hasStore {
		if pem.hasA {
			s.add("tls-cert", strings.TrimPrefix(strings.TrimSpace(pem.a.Value), "file:"), pem.a)
		}
		if pem.hasB {
			s.add("tls-key", strings.TrimPrefix(strings.TrimSpace(pem.b.Value), "file:"), pem.b)
		}
		return nil
	}
	s.add("tls-cert", store.Value, store)
	pw, err := s.pair("server.ssl.key-store-password", "server.ssl.key-password")
	if err != nil {
		return err
	}
	if pw.hasA {
		s.add("tls-cert-password", pw.a.Value, pw.a)
	}
	if pw.hasB && pw.b.Value != pw.a.Value {
		return fmt.Errorf("%s: %s: a key password other than the store's is not read here; give the key the store's password", pw.b.Source, pw.b.Name)
	}
	if alias, ok, err := s.lookup("server.ssl.key-alias"); err != nil {
		return err
	} else if ok {
		s.Notes = append(s.Notes, fmt.Sprintf("%s: %s: ignored (no effect here: the key store's one key is used; a store of several keys is refused)", alias.Source, alias.Name))
	}
	return nil
}

// trustStore returns the assignments of the clients' CA:
// server.ssl.trust-certificate (PEM) or trust-store and
// trust-store-password (PKCS12), as -tls-client-ca and
// -tls-client-ca-password.
func (s *Settings) trustStore() ([]Assignment, bool, error) {
	store, hasStore, err := s.storeFile("server.ssl.trust-store", "server.ssl.trust-store-type")
	if err != nil {
		return nil, false, err
	}
	pem, hasPEM, err := s.lookup("server.ssl.trust-certificate")
	if err != nil {
		return nil, false, err
	}
	as := func(setting, value string, p springconfig.Property) Assignment {
		return Assignment{Setting: setting, Value: value, From: fmt.Sprintf("%s %s", p.Source, p.Name), Arg: p.Source.Arg != ""}
	}
	switch {
	case hasStore && hasPEM:
		return nil, false, fmt.Errorf("%s: %s: set with %s: give the trust store or the PEM certificate", store.Source, store.Name, pem.Name)
	case hasPEM:
		return []Assignment{as("tls-client-ca", strings.TrimPrefix(strings.TrimSpace(pem.Value), "file:"), pem)}, true, nil
	case !hasStore:
		return nil, false, nil
	}
	out := []Assignment{as("tls-client-ca", store.Value, store)}
	if pw, ok, err := s.lookup("server.ssl.trust-store-password"); err != nil {
		return nil, false, err
	} else if ok {
		out = append(out, as("tls-client-ca-password", pw.Value, pw))
	}
	return out, true, nil
}
