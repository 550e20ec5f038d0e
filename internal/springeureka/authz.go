package springeureka

import (
	"fmt"
	"strings"
)

// authz maps who may write what, properties of this server's own
// (eurekagate.auth.*; Spring Security has no such binding):
//
//	eurekagate.auth.apps.<user>: ORDERS,ORDERS-*        -> -auth-apps <user>=ORDERS,ORDERS-*
//	eurekagate.auth.cert-apps.<name>: PAYMENTS          -> -auth-apps cert:<name>=PAYMENTS
//	eurekagate.auth.operators: ops,oncall               -> -auth-operators
//	eurekagate.auth.audit-log: /var/log/eureka-audit    -> -audit-log
//
// Each value may be a list (items [0], [1]...) as well as a comma-separated
// string. A user is the account of spring.security.user.name or of
// -auth-users.
func (s *Settings) authz() error {
	for _, m := range []struct{ root, prefix string }{{"eurekagate.auth.apps", ""}, {"eurekagate.auth.cert-apps", "cert:"}} {
		for _, e := range s.Conf.Map(m.root) {
			name := e.Property.Name
			if i := strings.IndexByte(name, '['); i >= 0 {
				name = name[:i]
			}
			apps, src, _, err := s.Conf.List(name)
			if err != nil {
				return err
			}
			s.Assign = append(s.Assign, Assignment{Setting: "auth-apps", Value: m.prefix + e.Key + "=" + strings.Join(apps, ","), From: fmt.Sprintf("%s %s", src, name), Arg: src.Arg != ""})
		}
	}
	if ops, src, ok, err := s.Conf.List("eurekagate.auth.operators"); err != nil {
		return err
	} else if ok {
		s.Assign = append(s.Assign, Assignment{Setting: "auth-operators", Value: strings.Join(ops, ","), From: fmt.Sprintf("%s %s", src, "eurekagate.auth.operators"), Arg: src.Arg != ""})
	}
	return nil
}
