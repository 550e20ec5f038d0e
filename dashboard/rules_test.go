package dashboard

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"reflect"
	"testing"

	"github.com/eurekagate/eurekagate/eureka"
	"github.com/eurekagate/eurekagate/internal/testkit"
	"github.com/eurekagate/eurekagate/registry"
	"github.com/eurekagate/eurekagate/routing"
)

// rulesDoc are the traffic rules of the tests: ORDERS's (ordersRules)
// and rules for an app with no instance.
const rulesDoc = ordersRules + `  payments:
    rules:
      - to: [{select: {zone: east}}]
`

// ordersRules are the traffic rules of ORDERS: a canary by header, a
// weighted sticky split for one tenant, a default subset, no fallback.
const ordersRules = `apps:
  orders:
    default: {version: "2.0"}
    rules:
      - match: {header: {X-Canary: "1"}}
        to: [{select: {version: "2.1"}}]
      - match: {cookie: {tenant: acme}}
        to:
          - {select: {version: "2.1"}, weight: 10}
          - {select: {version: "2.0"}, weight: 90}
        sticky: {header: X-User-Id}
    fallback: none
`

func mustRules(t *testing.T, doc string) *routing.Rules {
	t.Helper()
	rules, err := routing.ParseRules("rules.yaml", []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	return rules
}

// versioned registers an instance of app with the given metadata
// version ("" for none) and status.
func versioned(t *testing.T, store *registry.Store, app, id, version string, status eureka.Status) {
	t.Helper()
	i := testkit.Inst(app, id)
	i.Status = status
	if version != "" {
		i.Metadata = map[string]string{"version": version}
	}
	testkit.MustRegister(t, store, i, false)
}

// api/rules gives, for each app with rules, the rules as the document
// gave them and the app's instances in each subset (the default first),
// with the count of those in none; an app without rules is not listed.
func TestRulesView(t *testing.T) {
	rules := mustRules(t, rulesDoc)
	h, store, _ := newDashboard(t, Config{Rules: func() *routing.Rules { return rules }})
	versioned(t, store, "ORDERS", "o-1", "2.0", eureka.StatusUp)
	versioned(t, store, "ORDERS", "o-2", "2.0", eureka.StatusDown)
	versioned(t, store, "ORDERS", "o-3", "2.1", eureka.StatusUp)
	versioned(t, store, "ORDERS", "o-4", "", eureka.StatusUp)
	versioned(t, store, "ORDERS", "o-5", "3.0", eureka.StatusStarting)
	versioned(t, store, "INVENTORY", "i-1", "2.0", eureka.StatusUp)

	var v RulesView
	if code := get(t, h, context.Background(), "/api/rules", &v); code != 200 {
		t.Fatalf("api/rules: %d", code)
	}
	want := RulesView{Configured: true, Source: "rules.yaml", Apps: []AppRules{
		{
			App: "ORDERS",
			Rules: routing.AppDoc{Default: "version=2.0", Fallback: "none", Rules: []routing.RuleDoc{
				{Match: []string{"header X-Canary = 1"}, To: []routing.TargetDoc{{Subset: "version=2.1", Weight: 1}}},
				{Match: []string{"cookie tenant = acme"}, To: []routing.TargetDoc{{Subset: "version=2.1", Weight: 10}, {Subset: "version=2.0", Weight: 90}}, Sticky: "header X-User-Id"},
			}},
			Subsets: []SubsetView{
				{Label: "version=2.0", Default: true, Count: 2, Counts: map[string]int{"UP": 1, "DOWN": 1},
					Instances: []SubsetInstance{{"o-1", "UP"}, {"o-2", "DOWN"}}},
				{Label: "version=2.1", Count: 1, Counts: map[string]int{"UP": 1}, Instances: []SubsetInstance{{"o-3", "UP"}}},
			},
			Instances: 5, Unmatched: 2,
		},
		{
			App:       "PAYMENTS",
			Rules:     routing.AppDoc{Fallback: "default", Rules: []routing.RuleDoc{{To: []routing.TargetDoc{{Subset: "zone=east", Weight: 1}}}}},
			Subsets:   []SubsetView{{Label: "zone=east", Counts: map[string]int{}, Instances: []SubsetInstance{}}},
			Instances: 0, Unmatched: 0,
		},
	}}
	if !reflect.DeepEqual(v, want) {
		got, _ := json.MarshalIndent(v, "", "  ")
		t.Errorf("api/rules:\n%s", got)
	}

	// The JSON's names, as the page reads them.
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest("GET", "/api/rules", nil))
	var raw map[string]any
	if err := json.Unmarshal(w.Body.Bytes(), &raw); err != nil {
		t.Fatal(err)
	}
	orders := raw["apps"].([]any)[0].(map[string]any)
	doc := orders["rules"].(map[string]any)
	sub := orders["subsets"].([]any)[0].(map[string]any)
	inst := sub["instances"].([]any)[0].(map[string]any)
	if raw["source"] != "rules.yaml" || orders["app"] != "ORDERS" || orders["unmatched"] != 2.0 || doc["default"] != "version=2.0" ||
		doc["fallback"] != "none" || doc["rules"].([]any)[1].(map[string]any)["sticky"] != "header X-User-Id" ||
		sub["label"] != "version=2.0" || sub["default"] != true || sub["count"] != 2.0 || inst["id"] != "o-1" || inst["status"] != "UP" {
		t.Errorf("JSON: %s", w.Body)
	}
	if ct := w.Header().Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type %q", ct)
	}

	// A status change moves nothing between subsets, and is shown.
	if err := store.SetStatus("ORDERS", "o-3", eureka.StatusOutOfService, 0, false); err != nil {
		t.Fatal(err)
	}
	get(t, h, context.Background(), "/api/rules", &v)
	if s := v.Apps[0].Subsets[1]; s.Count != 1 || s.Instances[0] != (SubsetInstance{"o-3", "OUT_OF_SERVICE"}) {
		t.Errorf("after taking o-3 out of service: %+v", s)
	}
}

// Without a source of rules, or with none in force, api/rules lists no
// app; configured tells the two apart.
func TestRulesViewNone(t *testing.T) {
	for _, c := range []struct {
		name  string
		rules func() *routing.Rules
		want  string
	}{
		{"no Config.Rules", nil, `{"configured":false,"apps":[]}`},
		{"Config.Rules returns nil", func() *routing.Rules { return nil }, `{"configured":true,"apps":[]}`},
		{"an empty document", func() *routing.Rules { return mustRules(t, "") }, `{"configured":true,"source":"rules.yaml","apps":[]}`},
	} {
		h, store, _ := newDashboard(t, Config{Rules: c.rules})
		versioned(t, store, "ORDERS", "o-1", "2.0", eureka.StatusUp)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest("GET", "/api/rules", nil))
		if w.Code != 200 || w.Body.String() != c.want+"\n" {
			t.Errorf("%s: %d %s, want %s", c.name, w.Code, w.Body, c.want)
		}
	}
}

// A subset lists its first 100 instances by id; its count is the whole
// subset's.
func TestRulesViewBound(t *testing.T) {
	rules := mustRules(t, "apps:\n  orders:\n    default: {version: \"1\"}\n")
	h, store, _ := newDashboard(t, Config{Rules: func() *routing.Rules { return rules }})
	for n := range maxSubsetInstances + 20 {
		versioned(t, store, "ORDERS", fmt.Sprintf("o-%03d", n), "1", eureka.StatusUp)
	}
	var v RulesView
	get(t, h, context.Background(), "/api/rules", &v)
	s := v.Apps[0].Subsets[0]
	if s.Count != maxSubsetInstances+20 || len(s.Instances) != maxSubsetInstances || s.Instances[0].ID != "o-000" ||
		s.Instances[maxSubsetInstances-1].ID != fmt.Sprintf("o-%03d", maxSubsetInstances-1) || s.Counts["UP"] != maxSubsetInstances+20 {
		t.Errorf("subset: count %d, %d listed, first %v", s.Count, len(s.Instances), s.Instances[0])
	}
}
