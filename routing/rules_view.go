package routing

import "strings"

// AppView is one application's compiled rules as data, for a transport
// that translates them rather than runs them (the xDS server's routes).
type AppView struct {
	// Default is the subset of the requests no rule takes; nil: any
	// instance.
	Default *Subset
	// Fallback is where a request goes when its subset has no instance.
	Fallback Fallback
	// Rules are the rules, in order: the first whose conditions all hold
	// takes a request.
	Rules []RuleView
}

// RuleView is one rule.
type RuleView struct {
	// Match are its conditions, all of which must hold.
	Match []CondView
	// To are its targets, in the document's order.
	To []TargetView
	// Sticky names its sticky key ("header X-User-Id"), "" for none.
	Sticky string
}

// CondView is one condition of a rule.
type CondView struct {
	// Where is header, cookie, query, path_prefix, method or client.
	Where string
	// Name is the header (canonical form), cookie or query parameter;
	// "" for the others.
	Name string
	// Op is equals, in, present, absent, regex (RE2, matched anywhere in
	// a value of at most MaxRegexValue bytes), prefix (path_prefix) or
	// cidr (client).
	Op string
	// Values are the value (equals, regex, prefix), the values (in,
	// method) or the CIDR prefixes (cidr).
	Values []string
}

// TargetView is one target of a rule.
type TargetView struct {
	Subset *Subset
	Weight uint64
}

var (
	whereNames = [...]string{inHeader: "header", inCookie: "cookie", inQuery: "query", inMethod: "method", inPath: "path_prefix", inClient: "client"}
	opNames    = [...]string{opEqual: "equals", opIn: "in", opPresent: "present", opAbsent: "absent", opRegex: "regex", opPrefix: "prefix", opCIDR: "cidr"}
)

// View returns app's (upper case) rules as data, and whether it has any.
func (r *Rules) View(app string) (AppView, bool) {
	if r == nil || r.apps[app] == nil {
		return AppView{}, false
	}
	a := r.apps[app]
	v := AppView{Default: a.def, Fallback: a.fallback, Rules: make([]RuleView, 0, len(a.rules))}
	for i, ru := range a.rules {
		rv := RuleView{Sticky: a.doc.Rules[i].Sticky}
		for _, c := range ru.conds {
			rv.Match = append(rv.Match, c.view())
		}
		var upto uint64
		for _, t := range ru.to {
			rv.To = append(rv.To, TargetView{Subset: t.sub, Weight: t.upto - upto})
			upto = t.upto
		}
		v.Rules = append(v.Rules, rv)
	}
	return v, true
}

func (c *cond) view() CondView {
	v := CondView{Where: whereNames[c.where], Name: c.name, Op: opNames[c.op]}
	switch c.op {
	case opEqual, opPrefix:
		v.Values = []string{c.value}
	case opIn:
		v.Values = c.values
	case opRegex:
		v.Values = []string{c.re.String()}
	case opCIDR:
		for _, p := range c.prefixes {
			v.Values = append(v.Values, p.String())
		}
	}
	return v
}

// String names the condition as a message would: "header X-Canary",
// "client".
func (v CondView) String() string {
	return strings.TrimSpace(v.Where + " " + v.Name)
}
