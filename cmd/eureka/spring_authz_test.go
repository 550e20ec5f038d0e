package main

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// eurekagate.auth.* binds Spring's user (or a certificate) to apps,
// names the operators and the audit log; a binding of a user that does
// not exist is refused with the file's line.
func TestSpringBindings(t *testing.T) {
	trail := filepath.Join(t.TempDir(), "audit.log")
	o, err := parseSpring(t, springDir(t, map[string]string{"application.yml": `spring.security.user:
  name: orders
  password: s3cret
eurekagate.auth:
  apps:
    orders: ORDERS,ORDERS-*
  operators: orders
  audit-log: ` + trail + `
`}), nil)
	if err != nil {
		t.Fatal(err)
	}
	auth := o.registry.API.Auth
	if got := auth.Apps["orders"]; !slices.Equal(got, []string{"ORDERS", "ORDERS-*"}) {
		t.Errorf("apps of orders: %q", got)
	}
	if !slices.Equal(auth.Operators, []string{"orders"}) || o.auditLog != trail {
		t.Errorf("operators %q, audit log %q", auth.Operators, o.auditLog)
	}

	// A certificate's binding is read, and needs a client CA.
	_, err = parseSpring(t, springDir(t, map[string]string{"application.yml": "eurekagate.auth.cert-apps.svc-payments[0]: PAYMENTS\n"}), nil)
	if err == nil || !strings.Contains(err.Error(), "-auth-apps cert:svc-payments: a certificate binding needs -tls-client-ca") {
		t.Errorf("a certificate binding without a client CA: %v", err)
	}

	_, err = parseSpring(t, springDir(t, map[string]string{"application.yml": "spring.security.user.name: ops\nspring.security.user.password: x\neurekagate.auth.apps.orders: ORDERS\n"}), nil)
	if err == nil || !strings.Contains(err.Error(), `application.yml:3 eurekagate.auth.apps.orders: -auth-apps: "orders" is not an account`) {
		t.Errorf("a binding of an unknown user: %v", err)
	}
}
