package routing

import (
	"fmt"
	"testing"
)

// View gives each rule's conditions, targets with their own weights, and
// sticky key as the document wrote them, and the default and fallback.
func TestRulesView(t *testing.T) {
	rules, err := ParseRules("rules.yaml", []byte(`
apps:
  orders:
    default: {version: "2.0"}
    fallback: none
    rules:
      - match: {header: {x-canary: [a, b]}, path_prefix: /v2/, method: [GET, HEAD], client: 10.0.0.0/8, query: {q: {regex: "^x"}}, cookie: {c: {present: false}}}
        to:
          - {select: {version: "2.1"}, weight: 10}
          - {select: {version: "2.0"}, weight: 90}
        sticky: {cookie: user}
`))
	if err != nil {
		t.Fatal(err)
	}
	v, ok := rules.View("ORDERS")
	if !ok || v.Default.Label() != "version=2.0" || v.Fallback != FallbackNone || len(v.Rules) != 1 {
		t.Fatalf("got %+v %v", v, ok)
	}
	r := v.Rules[0]
	var got string
	for _, c := range r.Match {
		got += fmt.Sprintf("%s|%s|%q; ", c, c.Op, c.Values)
	}
	want := `header X-Canary|in|["a" "b"]; path_prefix|prefix|["/v2/"]; method|in|["GET" "HEAD"]; client|cidr|["10.0.0.0/8"]; query q|regex|["^x"]; cookie c|absent|[]; `
	if got != want {
		t.Errorf("conditions\n got %s\nwant %s", got, want)
	}
	if len(r.To) != 2 || r.To[0].Subset.Label() != "version=2.1" || r.To[0].Weight != 10 || r.To[1].Subset != v.Default || r.To[1].Weight != 90 {
		t.Errorf("targets %+v", r.To)
	}
	if r.Sticky != "cookie user" {
		t.Errorf("sticky %q", r.Sticky)
	}
	if _, ok := rules.View("USERS"); ok {
		t.Error("a view of an app without rules")
	}
}
