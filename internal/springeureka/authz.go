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
	if err := s.mapOfLists("eurekagate.auth.apps", "auth-apps", ""); err != nil {
		return err
	}
	if err := s.mapOfLists("eurekagate.auth.cert-apps", "auth-apps", "cert:"); err != nil {
		return err
	}
	if ops, src, ok, err := s.Conf.List("eurekagate.auth.operators"); err != nil {
		return err
	} else if ok {
		s.Assign = append(s.Assign, Assignment{Setting: "auth-operators", Value: strings.Join(ops, ","), From: fmt.Sprintf("%s %s", src, "eurekagate.auth.operators"), Arg: src.Arg != ""})
	}
	return nil
}
