package routing

import (
	"fmt"
	"net/netip"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/eurekagate/eurekagate/balancer"
)

// A RulesError is a rules document refused: where, and why.
type RulesError struct {
	// Source is the file (or what the host called the document).
	Source string
	// Line is the line of the document at fault, from 1 (0: the whole
	// document).
	Line int
	// Reason says what is wrong, and at which key.
	Reason string
}

// Error returns "source:line: reason".
func (e *RulesError) Error() string {
	if e.Line == 0 {
		return e.Source + ": " + e.Reason
	}
	return fmt.Sprintf("%s:%d: %s", e.Source, e.Line, e.Reason)
}

// LoadRules reads and parses the rules document at path within the
// default RulesLimits (see ParseRules).
func LoadRules(path string) (*Rules, error) { return RulesLimits{}.Load(path) }

// The bounds of a document.
const (
	// maxTargets is the most targets a rule may split its requests
	// over, and maxWeight the largest weight of one: their product is
	// below weightStride.
	maxTargets = 100
	maxWeight  = 10_000
)

// ParseRules parses a traffic rules document, YAML or JSON (source names
// it in errors). A document that does not parse or validate is refused
// with a *RulesError giving its line and the reason. The shape:
//
//	apps:
//	  ORDERS:                               # the app, any case
//	    default: {version: "2.0"}           # requests that match no rule; default: any instance
//	    rules:                              # the first rule whose conditions all hold takes the request
//	      - match: {header: {X-Canary: "1"}}
//	        to: [{select: {version: "2.1"}}]
//	      - match: {cookie: {tenant: acme}, path_prefix: /v2/}
//	        to:
//	          - {select: {version: "2.1"}, weight: 10}
//	          - {select: {version: "2.0"}, weight: 90}
//	        sticky: {header: X-User-Id}     # or {cookie: name} or {query: name}
//	    fallback: default                   # default | any | none
//
// Conditions (match; all must hold, none is a rule for every request):
// header, cookie and query each map names to a value that is equal to a
// string ("1"), in a list ([a, b], or {in: [a, b]}), present
// ({present: true}) or absent ({present: false}), or matches an RE2
// regular expression ({regex: "^acme-"}); path_prefix is a prefix of the
// path the instance gets (after the app's name, as sent: escaped);
// method is a method or a list; client is a CIDR prefix, an address or a
// list of them, matched against the client's address (a trusted proxy's
// X-Forwarded-For's last).
//
// A subset (select, default) maps metadata keys to a value or a list
// ({version: ["2.0", "2.1"]} or {version: {in: [...]}}); an instance is in
// it when its Eureka metadata has every key with one of its values.
//
// Weights are whole numbers from 0 to 10000 (default 1); a rule's
// requests are split in proportion, exactly over each run of as many
// requests as the weights add up to. With sticky, a request carrying the
// key goes where the key's hash points among the weights, so that one
// key stays on one subset while the weights stay; when they change, the
// keys that move are those whose point crosses a moved boundary (with
// two targets: only keys of the subset that shrinks). A request without
// the key is split by weight.
//
// fallback says where a request goes when its subset has no instance
// that can take it: default (the default subset, or any instance when
// there is none; the default), any, or none (503, naming the subset).
//
// Rate limits go beside the rules: defaults: {limits: [...]} for every
// app without a limits key of its own, and an app's limits (see
// Router.Limit; docs/gateway.md, "Protecting services", for the keys,
// rates, bursts and the 429's headers).
// Circuit breakers and retry budgets go there too: an app's breaker and
// retry_budget, or every app's in defaults (rules_breaker_doc.go;
// docs/gateway.md, "Circuit breakers" and "Retry budgets").
//
// The document is read within the default RulesLimits (RulesLimits.Parse
// takes others): at most 256 KiB, 1000 rules and regular expressions of
// 10,000 instructions in all; a refusal quotes at most 80 bytes of any
// key or value. A header a rule reads is an HTTP token, and not one the
// gateway sets itself (X-Forwarded-*, X-Real-Ip, Forwarded, the route
// and region headers), which would hold a client's forged value: client
// matches the client's address. YAML aliases are refused. A regex
// condition tests values of up to MaxRegexValue (256) bytes: a longer
// one does not match.
func ParseRules(source string, data []byte) (*Rules, error) {
	return RulesLimits{}.Parse(source, data)
}

// Parse parses a traffic rules document within l (see ParseRules).
func (l RulesLimits) Parse(source string, data []byte) (*Rules, error) {
	l = l.WithDefaults()
	if len(data) > l.MaxBytes {
		return nil, l.tooLarge(source, data)
	}
	p := &parser{source: source, lim: l}
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil, p.yamlError(err)
	}
	rules := &Rules{source: source, apps: map[string]*appRules{}}
	if root.Kind == 0 || len(root.Content) == 0 {
		return rules, nil // an empty document: no rules
	}
	doc := root.Content[0]
	if err := p.noAliases(doc, ""); err != nil {
		return nil, err
	}
	err := p.mapping(doc, "", map[string]func(*yaml.Node, string) error{
		"apps": func(n *yaml.Node, at string) error {
			return p.each(n, at, func(k, v *yaml.Node, at string) error {
				app := strings.ToUpper(k.Value)
				if app == "" || strings.ContainsAny(app, "/ ") {
					return p.fail(k, at, "an app's name is not empty and has no '/' or space")
				}
				if _, dup := rules.apps[app]; dup {
					return p.fail(k, at, "app "+p.lim.echo(app)+" comes twice")
				}
				a, err := p.app(v, at, app, k.Value)
				if err != nil {
					return err
				}
				rules.apps[app] = a
				return nil
			})
		},
		"defaults": func(n *yaml.Node, at string) error { return p.defaults(n, at, rules) },
	})
	if err != nil {
		return nil, err
	}
	p.setSCG(rules)
	markGuarded(rules)
	if err := p.setShared(rules); err != nil {
		return nil, err
	}
	return rules, nil
}

type parser struct {
	source string
	lim    RulesLimits
	rules  int   // the rules read so far
	regex  int64 // the size of the regular expressions compiled so far
	// limitKeys are the keys the rate limits read so far may hold, and
	// noSCG is defaults' scg_headers: false.
	limitKeys int
	noSCG     bool
	// failure is defaults' redis_failure, at failureAt.
	failure   int8
	failureAt *yaml.Node
}

var yamlLine = regexp.MustCompile(`line (\d+)`)

func (p *parser) yamlError(err error) error {
	line := 0
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	if m := yamlLine.FindStringSubmatch(msg); m != nil {
		line, _ = strconv.Atoi(m[1])
		msg = strings.TrimSpace(strings.Replace(msg, m[0]+":", "", 1))
	}
	return &RulesError{Source: p.source, Line: line, Reason: p.lim.echo(msg)}
}

func (p *parser) fail(n *yaml.Node, at, reason string) error {
	if at != "" {
		reason = at + ": " + reason
	}
	return &RulesError{Source: p.source, Line: n.Line, Reason: reason}
}

// join returns the key path of key within at, key cut to MaxEcho.
func (p *parser) join(at, key string) string {
	key = p.lim.echo(key)
	if at == "" {
		return key
	}
	return at + "." + key
}

// noAliases refuses the document if any node of it is an alias: an
// alias repeats its anchor's value where it stands, so a document of a
// few kilobytes can stand for millions of rules.
func (p *parser) noAliases(n *yaml.Node, at string) error {
	if n.Kind == yaml.AliasNode {
		return p.fail(n, at, fmt.Sprintf("a YAML alias (*%s) is refused in a rules document: write the value out", p.lim.echo(n.Value)))
	}
	for i, c := range n.Content {
		switch {
		case n.Kind != yaml.MappingNode:
			if err := p.noAliases(c, fmt.Sprintf("%s[%d]", at, i)); err != nil {
				return err
			}
		case i%2 == 1:
			if err := p.noAliases(c, p.join(at, n.Content[i-1].Value)); err != nil {
				return err
			}
		default:
			if err := p.noAliases(c, at); err != nil {
				return err
			}
		}
	}
	return nil
}

// mapping walks a mapping whose keys are fields, each given to its
// function; a key of no field is refused.
func (p *parser) mapping(n *yaml.Node, at string, fields map[string]func(*yaml.Node, string) error) error {
	return p.each(n, at, func(k, v *yaml.Node, at string) error {
		f, ok := fields[k.Value]
		if !ok {
			names := make([]string, 0, len(fields))
			for name := range fields {
				names = append(names, name)
			}
			return p.fail(k, at, fmt.Sprintf("unknown field %q (known: %s)", p.lim.echo(k.Value), strings.Join(slices.Sorted(slices.Values(names)), ", ")))
		}
		return f(v, at)
	})
}

// each walks the pairs of a mapping, at is the key path of each.
func (p *parser) each(n *yaml.Node, at string, f func(k, v *yaml.Node, at string) error) error {
	if n.Kind != yaml.MappingNode {
		return p.fail(n, at, "is not a mapping")
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if seen[k.Value] {
			return p.fail(k, at, fmt.Sprintf("%q comes twice", p.lim.echo(k.Value)))
		}
		seen[k.Value] = true
		if err := f(k, v, p.join(at, k.Value)); err != nil {
			return err
		}
	}
	return nil
}

func (p *parser) seq(n *yaml.Node, at string, f func(v *yaml.Node, at string) error) error {
	if n.Kind != yaml.SequenceNode {
		return p.fail(n, at, "is not a list")
	}
	for i, v := range n.Content {
		if err := f(v, fmt.Sprintf("%s[%d]", at, i)); err != nil {
			return err
		}
	}
	return nil
}

func (p *parser) scalar(n *yaml.Node, at string) (string, error) {
	if n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
		return "", p.fail(n, at, "is not a string")
	}
	return n.Value, nil
}

// scalars reads a string or a list of strings.
func (p *parser) scalars(n *yaml.Node, at string) ([]string, error) {
	if n.Kind == yaml.ScalarNode {
		v, err := p.scalar(n, at)
		return []string{v}, err
	}
	var out []string
	err := p.seq(n, at, func(v *yaml.Node, at string) error {
		s, err := p.scalar(v, at)
		out = append(out, s)
		return err
	})
	if err == nil && len(out) == 0 {
		err = p.fail(n, at, "is an empty list")
	}
	return out, err
}

// app compiles one app's rules.
func (p *parser) app(n *yaml.Node, at, app, name string) (*appRules, error) {
	a := &appRules{name: name, doc: AppDoc{Fallback: FallbackDefault.String()}}
	subsets := map[string]*Subset{}
	subset := func(n *yaml.Node, at string) (*Subset, error) {
		sel, err := p.selector(n, at)
		if err != nil {
			return nil, err
		}
		if s, ok := subsets[sel.String()]; ok {
			return s, nil
		}
		s, err := newSubset(app, sel)
		if err != nil {
			return nil, p.fail(n, at, p.lim.echo(err.Error()))
		}
		subsets[sel.String()] = s
		a.subsets = append(a.subsets, s)
		return s, nil
	}
	err := p.mapping(n, at, p.policyFields(&a.policies, map[string]func(*yaml.Node, string) error{
		"limits": func(n *yaml.Node, at string) error {
			var err error
			a.limits, err = p.limits(n, at, false)
			a.ownLimits = true
			return err
		},
		"default": func(n *yaml.Node, at string) error {
			s, err := subset(n, at)
			a.def = s
			return err
		},
		"fallback": func(n *yaml.Node, at string) error {
			v, err := p.scalar(n, at)
			if err != nil {
				return err
			}
			for f, name := range fallbackNames {
				if v == name {
					a.fallback = Fallback(f)
					a.doc.Fallback = name
					return nil
				}
			}
			return p.fail(n, at, fmt.Sprintf("%q is not default, any or none", p.lim.echo(v)))
		},
		"rules": func(n *yaml.Node, at string) error {
			return p.seq(n, at, func(v *yaml.Node, at string) error {
				if p.rules++; p.rules > p.lim.MaxRules {
					return p.fail(v, at, fmt.Sprintf("is a rule past the limit of %d rules in a document", p.lim.MaxRules))
				}
				r, doc, err := p.rule(v, at, subset)
				a.rules = append(a.rules, r)
				a.doc.Rules = append(a.doc.Rules, doc)
				return err
			})
		},
	}))
	if err != nil {
		return nil, err
	}
	if a.def != nil {
		a.doc.Default = a.def.Label()
		// The default first, for the dashboard.
		for i, s := range a.subsets {
			if s == a.def {
				copy(a.subsets[1:i+1], a.subsets[:i])
				a.subsets[0] = s
			}
		}
	}
	return a, nil
}

// selector reads a subset's selector: metadata keys to a value or list.
func (p *parser) selector(n *yaml.Node, at string) (balancer.Selector, error) {
	terms := map[string][]string{}
	err := p.each(n, at, func(k, v *yaml.Node, at string) error {
		if v.Kind == yaml.MappingNode {
			return p.mapping(v, at, map[string]func(*yaml.Node, string) error{
				"in": func(n *yaml.Node, at string) error {
					vs, err := p.scalars(n, at)
					terms[k.Value] = vs
					return err
				},
			})
		}
		vs, err := p.scalars(v, at)
		terms[k.Value] = vs
		return err
	})
	if err != nil {
		return balancer.Selector{}, err
	}
	sel, err := balancer.NewSelector(terms)
	if err != nil {
		return sel, p.fail(n, at, p.lim.echo(err.Error()))
	}
	return sel, nil
}

// rule compiles one rule.
func (p *parser) rule(n *yaml.Node, at string, subset func(*yaml.Node, string) (*Subset, error)) (*rule, RuleDoc, error) {
	r := &rule{}
	var doc RuleDoc
	hasTo := false
	err := p.mapping(n, at, map[string]func(*yaml.Node, string) error{
		"match": func(n *yaml.Node, at string) error {
			return p.match(n, at, r, &doc)
		},
		"to": func(n *yaml.Node, at string) error {
			hasTo = true
			if n.Kind == yaml.SequenceNode && len(n.Content) > maxTargets {
				return p.fail(n, at, fmt.Sprintf("has more than %d targets", maxTargets))
			}
			err := p.seq(n, at, func(v *yaml.Node, at string) error {
				var sub *Subset
				weight := uint64(1)
				err := p.mapping(v, at, map[string]func(*yaml.Node, string) error{
					"select": func(n *yaml.Node, at string) error {
						var err error
						sub, err = subset(n, at)
						return err
					},
					"weight": func(n *yaml.Node, at string) error {
						w, err := strconv.ParseUint(n.Value, 10, 32)
						if n.Kind != yaml.ScalarNode || err != nil || w > maxWeight {
							return p.fail(n, at, fmt.Sprintf("%q is not a whole number from 0 to %d", p.lim.echo(n.Value), maxWeight))
						}
						weight = w
						return nil
					},
				})
				if err != nil {
					return err
				}
				if sub == nil {
					return p.fail(v, at, "a target needs select: the subset it sends requests to")
				}
				r.total += weight
				r.to = append(r.to, target{sub: sub, upto: r.total})
				doc.To = append(doc.To, TargetDoc{Subset: sub.Label(), Weight: int(weight)})
				return nil
			})
			if err == nil && len(r.to) == 0 {
				err = p.fail(n, at, "a rule needs at least one target")
			}
			if err == nil && r.total == 0 {
				err = p.fail(n, at, "the weights add up to 0")
			}
			return err
		},
		"sticky": func(n *yaml.Node, at string) error {
			return p.each(n, at, func(k, v *yaml.Node, at string) error {
				if r.sticky.name != "" {
					return p.fail(k, at, "sticky takes one key: header, cookie or query")
				}
				name, err := p.scalar(v, at)
				if err != nil {
					return err
				}
				if name == "" {
					return p.fail(v, at, "names no key")
				}
				switch k.Value {
				case "header":
					canon, wrong := ruleHeader(name)
					if wrong != "" {
						return p.fail(v, at, fmt.Sprintf("%q %s", p.lim.echo(name), wrong))
					}
					r.sticky = sticky{where: inHeader, name: canon}
				case "cookie":
					r.sticky = sticky{where: inCookie, name: name}
				case "query":
					r.sticky = sticky{where: inQuery, name: name}
				default:
					return p.fail(k, at, fmt.Sprintf("unknown field %q (known: cookie, header, query)", p.lim.echo(k.Value)))
				}
				doc.Sticky = k.Value + " " + r.sticky.name
				return nil
			})
		},
	})
	if err == nil && !hasTo {
		err = p.fail(n, at, "a rule needs to: the subsets it sends requests to")
	}
	return r, doc, err
}

// match compiles a rule's conditions.
func (p *parser) match(n *yaml.Node, at string, r *rule, doc *RuleDoc) error {
	named := func(w where) func(*yaml.Node, string) error {
		return func(n *yaml.Node, at string) error {
			return p.each(n, at, func(k, v *yaml.Node, at string) error {
				name := k.Value
				if name == "" {
					return p.fail(k, at, "names nothing")
				}
				if w == inHeader {
					var wrong string
					if name, wrong = ruleHeader(name); wrong != "" {
						return p.fail(k, at, fmt.Sprintf("%q %s", p.lim.echo(k.Value), wrong))
					}
				}
				c, text, err := p.condition(v, at)
				if err != nil {
					return err
				}
				c.where, c.name = w, name
				r.conds = append(r.conds, c)
				doc.Match = append(doc.Match, [...]string{"header", "cookie", "query"}[w]+" "+name+" "+text)
				return nil
			})
		}
	}
	return p.mapping(n, at, map[string]func(*yaml.Node, string) error{
		"header": named(inHeader),
		"cookie": named(inCookie),
		"query":  named(inQuery),
		"path_prefix": func(n *yaml.Node, at string) error {
			v, err := p.scalar(n, at)
			if err != nil {
				return err
			}
			if !strings.HasPrefix(v, "/") {
				return p.fail(n, at, fmt.Sprintf("%q does not start with /", p.lim.echo(v)))
			}
			r.conds = append(r.conds, cond{where: inPath, op: opPrefix, value: v})
			doc.Match = append(doc.Match, "path "+v+"…")
			return nil
		},
		"method": func(n *yaml.Node, at string) error {
			vs, err := p.scalars(n, at)
			if err != nil {
				return err
			}
			for _, m := range vs {
				if m == "" || strings.IndexFunc(m, func(c rune) bool { return c > 0x7e || !isToken(byte(c)) }) >= 0 {
					return p.fail(n, at, fmt.Sprintf("%q is not a method", p.lim.echo(m)))
				}
			}
			r.conds = append(r.conds, cond{where: inMethod, op: opIn, values: vs})
			doc.Match = append(doc.Match, "method "+strings.Join(vs, "|"))
			return nil
		},
		"client": func(n *yaml.Node, at string) error {
			vs, err := p.scalars(n, at)
			if err != nil {
				return err
			}
			c := cond{where: inClient, op: opCIDR}
			for _, v := range vs {
				pfx, err := netip.ParsePrefix(v)
				if err != nil {
					ip, err2 := netip.ParseAddr(v)
					if err2 != nil {
						return p.fail(n, at, fmt.Sprintf("%q is neither a CIDR prefix nor an address", p.lim.echo(v)))
					}
					pfx = netip.PrefixFrom(ip.Unmap(), ip.Unmap().BitLen())
				}
				c.prefixes = append(c.prefixes, pfx.Masked())
			}
			r.conds = append(r.conds, c)
			doc.Match = append(doc.Match, "client "+strings.Join(vs, "|"))
			return nil
		},
	})
}

// condition compiles the test of a header, cookie or query condition,
// and describes it.
func (p *parser) condition(n *yaml.Node, at string) (cond, string, error) {
	switch n.Kind {
	case yaml.ScalarNode, yaml.SequenceNode:
		vs, err := p.scalars(n, at)
		if err != nil {
			return cond{}, "", err
		}
		if len(vs) == 1 {
			return cond{op: opEqual, value: vs[0]}, "= " + vs[0], nil
		}
		return cond{op: opIn, values: vs}, "in " + strings.Join(vs, "|"), nil
	case yaml.MappingNode:
	default:
		return cond{}, "", p.fail(n, at, "is not a value, a list or a test")
	}
	var c cond
	var text string
	err := p.mapping(n, at, map[string]func(*yaml.Node, string) error{
		"equals": func(n *yaml.Node, at string) error {
			v, err := p.scalar(n, at)
			c, text = cond{op: opEqual, value: v}, "= "+v
			return err
		},
		"in": func(n *yaml.Node, at string) error {
			vs, err := p.scalars(n, at)
			c, text = cond{op: opIn, values: vs}, "in "+strings.Join(vs, "|")
			return err
		},
		"present": func(n *yaml.Node, at string) error {
			var b bool
			if err := n.Decode(&b); err != nil || n.Kind != yaml.ScalarNode {
				return p.fail(n, at, "is not true or false")
			}
			c, text = cond{op: opAbsent}, "absent"
			if b {
				c, text = cond{op: opPresent}, "present"
			}
			return nil
		},
		"regex": func(n *yaml.Node, at string) error {
			v, err := p.scalar(n, at)
			if err != nil {
				return err
			}
			re, size, err := compileRegex(v, int64(p.lim.MaxRegexSize)-p.regex)
			if err != nil {
				return p.fail(n, at, p.lim.echo(err.Error()))
			}
			if p.regex += size; re == nil {
				return p.fail(n, at, fmt.Sprintf("the regular expressions come to about %d instructions compiled, past the limit of %d in a document", p.regex, p.lim.MaxRegexSize))
			}
			c, text = cond{op: opRegex, re: re}, "~ "+v
			return nil
		},
	})
	if err != nil {
		return cond{}, "", err
	}
	if len(n.Content) != 2 {
		return cond{}, "", p.fail(n, at, "takes one test: equals, in, present or regex")
	}
	return c, text, nil
}

// AppDoc is one application's rules as they are in force, for the
// dashboard and the admin API.
type AppDoc struct {
	// Default is the default subset's selector, "" for any instance.
	Default string `json:"default,omitempty"`
	// Rules are the rules, in order.
	Rules []RuleDoc `json:"rules,omitempty"`
	// Fallback is default, any or none.
	Fallback string `json:"fallback"`
}

// RuleDoc describes one rule.
type RuleDoc struct {
	// Match are its conditions, each as text: "header X-Canary = 1".
	Match []string `json:"match,omitempty"`
	// To are its targets.
	To []TargetDoc `json:"to"`
	// Sticky names its sticky key: "header X-User-Id".
	Sticky string `json:"sticky,omitempty"`
}

// TargetDoc is one target of a rule.
type TargetDoc struct {
	Subset string `json:"subset"`
	Weight int    `json:"weight"`
}
