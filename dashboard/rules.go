package dashboard

import (
	"github.com/eurekagate/eurekagate/routing"
)

// maxSubsetInstances bounds the instances api/rules lists per subset (by
// id); Count is the whole subset's.
const maxSubsetInstances = 100

// RulesView is api/rules: the traffic rules in force (Config.Rules) and,
// for each app they are for, the app's instances in each subset.
type RulesView struct {
	// Configured is true when the dashboard has a source of rules
	// (Config.Rules is set), whether or not rules are in force now.
	Configured bool `json:"configured"`
	// Source is where the rules were read from (routing.Rules.Source).
	Source string `json:"source,omitempty"`
	// Apps are the apps with rules, sorted: none when no rules are in
	// force.
	Apps []AppRules `json:"apps"`
}

// AppRules is one app's rules and its instances by subset.
type AppRules struct {
	// App is the app's name, upper case.
	App string `json:"app"`
	// Rules are the rules as the document gave them.
	Rules routing.AppDoc `json:"rules"`
	// Subsets are the subsets the rules name, the default first.
	Subsets []SubsetView `json:"subsets"`
	// Instances is how many instances the app has, whatever their status.
	Instances int `json:"instances"`
	// Unmatched is how many of them are in no subset.
	Unmatched int `json:"unmatched"`
}

// SubsetView is one subset and the app's instances in it.
type SubsetView struct {
	// Label is the subset's selector as text ("version=2.1").
	Label string `json:"label"`
	// Default is true for the default subset.
	Default bool `json:"default"`
	// Count is how many instances are in it, and Counts how many by status.
	Count  int            `json:"count"`
	Counts map[string]int `json:"counts"`
	// Instances are its instances, by id, at most the first 100.
	Instances []SubsetInstance `json:"instances"`
}

// SubsetInstance is an instance of a subset.
type SubsetInstance struct {
	ID     string `json:"id"`
	Status string `json:"status"`
}

// rules serves api/rules.
func (h *Handler) rules() RulesView {
	out := RulesView{Configured: h.cfg.Rules != nil, Apps: []AppRules{}}
	if h.cfg.Rules == nil {
		return out
	}
	rules := h.cfg.Rules()
	if rules == nil {
		return out
	}
	out.Source = rules.Source()
	for _, app := range rules.Apps() {
		doc, _ := rules.App(app)
		subsets := rules.Subsets(app)
		a := AppRules{App: app, Rules: doc, Subsets: make([]SubsetView, len(subsets))}
		for n, s := range subsets {
			a.Subsets[n] = SubsetView{Label: s.Label(), Default: doc.Default != "" && s.Label() == doc.Default,
				Counts: map[string]int{}, Instances: []SubsetInstance{}}
		}
		all := h.store.AllInstances(app) // sorted by id
		a.Instances = len(all)
		for _, i := range all {
			in := false
			for n, s := range subsets {
				if !s.Selector.Match(i) {
					continue
				}
				in = true
				v := &a.Subsets[n]
				v.Count++
				v.Counts[i.Status.String()]++
				if len(v.Instances) < maxSubsetInstances {
					v.Instances = append(v.Instances, SubsetInstance{ID: i.ID(), Status: i.Status.String()})
				}
			}
			if !in {
				a.Unmatched++
			}
		}
		out.Apps = append(out.Apps, a)
	}
	return out
}
