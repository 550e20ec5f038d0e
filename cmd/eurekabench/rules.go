package main

import (
	"fmt"
	"strings"

	"github.com/eurekagate/eurekagate/registry"
)

// ruleHeaders are the headers both gateways of the study get: those the
// rules read (the last rule matches X-Canary, and keys its split by
// X-User-Id), so that the requests are the same with and without rules.
var ruleHeaders = [][2]string{{"X-Canary", "1"}, {"X-User-Id", "user-42"}, {"Cookie", "session=abc"}}

// benchRules is the study's rules document: 19 rules on SVC that do not
// match the study's requests (each checks a header and a cookie), then the
// one that does, a 10/90 split of two versions with a sticky key.
func benchRules() string {
	var b strings.Builder
	b.WriteString("apps:\n  SVC:\n    default: {version: \"2.0\"}\n    rules:\n")
	for k := range 19 {
		fmt.Fprintf(&b, "      - match: {header: {X-Tenant: tenant-%d}, cookie: {beta: \"1\"}}\n        to: [{select: {version: \"2.1\"}}]\n", k)
	}
	b.WriteString("      - match: {header: {X-Canary: \"1\"}, path_prefix: /x}\n" +
		"        to: [{select: {version: \"2.1\"}, weight: 10}, {select: {version: \"2.0\"}, weight: 90}]\n" +
		"        sticky: {header: X-User-Id}\n")
	return b.String()
}

// registerVersions registers the backend twice, as an instance of each
// version the rules select.
func registerVersions(store *registry.Store, backend string) error {
	for _, v := range []string{"2.0", "2.1"} {
		i := benchInstance(backend)
		i.InstanceID = "backend-" + v
		i.Metadata = map[string]string{"version": v}
		if err := store.Register(i, false); err != nil {
			return err
		}
	}
	return nil
}
