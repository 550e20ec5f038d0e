package caddymodule

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"go.yaml.in/yaml/v3"

	"github.com/eurekagate/eurekagate/balancer"
	"github.com/eurekagate/eurekagate/routing"
)

// TrafficRules are the traffic rules of eureka_gateway and of the eureka
// upstream source: the subset of an application's instances (by their
// Eureka metadata) that a request goes to, by its headers, cookies,
// query, path, method or client address, with weights and sticky keys.
// The document is routing.ParseRules's, inline (Rules, in the Caddyfile a
// heredoc of YAML) or in a file (RulesFile). A config reload reads them
// again: a document that does not parse or validate, or is past one of
// the limits (routing.RulesLimits), fails the reload, and the config in
// force keeps its rules.
type TrafficRules struct {
	// Rules is the rules document, inline, as JSON.
	Rules json.RawMessage `json:"rules,omitempty"`
	// RulesFile is a file holding the rules document, YAML or JSON.
	RulesFile string `json:"rules_file,omitempty"`
	// RulesMaxBytes is the largest document, in bytes. Default 262144
	// (256 KiB).
	RulesMaxBytes int `json:"rules_max_bytes,omitempty"`
	// RulesMaxRules is the most rules in the document, all apps
	// together. Default 1000.
	RulesMaxRules int `json:"rules_max_rules,omitempty"`
	// RulesMaxRegexSize is the most instructions the document's regular
	// expressions compile to, together. Default 10000.
	RulesMaxRegexSize int `json:"rules_max_regex_size,omitempty"`
	// RulesMaxEcho is the longest piece of a refused document that the
	// refusal quotes, in bytes. Default 80.
	RulesMaxEcho int `json:"rules_max_echo,omitempty"`

	heredoc string // the Caddyfile's heredoc, checked once its block is read
	// shared is the eureka app's Redis (redis.go), for eureka_gateway's
	// rules; nil: shared: true is refused.
	shared *routing.SharedLimits
}

// load parses the rules; nil when there are none.
func (t TrafficRules) load(module string) (*routing.Rules, error) {
	lim, err := t.limits(module)
	if err != nil {
		return nil, err
	}
	set := lim != routing.RulesLimits{}
	lim.Shared = t.shared
	switch {
	case len(t.Rules) > 0 && t.RulesFile != "":
		return nil, errors.New(module + ": rules and rules_file are both set; set one")
	case len(t.Rules) > 0:
		return lim.Parse(module+" rules", t.Rules)
	case t.RulesFile != "":
		return lim.Load(t.RulesFile)
	case set:
		return nil, errors.New(module + ": a rules_max_* limit is set without rules or rules_file")
	}
	return nil, nil
}

// limitOption is one rules_max_* option: its name, in JSON and in the
// Caddyfile, and its field.
type limitOption struct {
	name string
	v    *int
}

// limitOptions is the one table of the rules_max_* options, which the
// Caddyfile's reader, the JSON check and rulesOption all read; each name
// is its field's JSON tag (TestRulesLimitOptionsAreTheJSONNames).
func (t *TrafficRules) limitOptions() []limitOption {
	return []limitOption{{"rules_max_bytes", &t.RulesMaxBytes}, {"rules_max_rules", &t.RulesMaxRules},
		{"rules_max_regex_size", &t.RulesMaxRegexSize}, {"rules_max_echo", &t.RulesMaxEcho}}
}

// limitOption returns the rules_max_* option named name, or nil.
func (t *TrafficRules) limitOption(name string) *int {
	for _, l := range t.limitOptions() {
		if l.name == name {
			return l.v
		}
	}
	return nil
}

// limits returns the limits the options set (0: the default), refusing
// a negative one.
func (t TrafficRules) limits(module string) (routing.RulesLimits, error) {
	for _, l := range t.limitOptions() {
		if *l.v < 0 {
			return routing.RulesLimits{}, fmt.Errorf("%s: %s is %d: a limit is above 0 (leave it out for the default)", module, l.name, *l.v)
		}
	}
	return routing.RulesLimits{MaxBytes: t.RulesMaxBytes, MaxRules: t.RulesMaxRules, MaxRegexSize: t.RulesMaxRegexSize, MaxEcho: t.RulesMaxEcho}, nil
}

// httpFields reads a net/http header for the traffic rules.
type httpFields http.Header

func (h httpFields) Field(name string) (string, bool) {
	v := h[name]
	if len(v) == 0 {
		return "", false
	}
	return v[0], true
}

// ruleRequest is what the traffic rules read of r; trusted says Caddy
// trusts its client as a proxy (the server's trusted_proxies).
func ruleRequest(r *http.Request) routing.Request {
	trusted, _ := caddyhttp.GetVar(r.Context(), caddyhttp.TrustedProxyVarKey).(bool)
	ip, _ := caddyhttp.GetVar(r.Context(), caddyhttp.ClientIPVarKey).(string)
	return routing.Request{Method: r.Method, ClientIP: ip, Trusted: trusted, Header: httpFields(r.Header)}
}

// setRoute tells the instance the subset its request goes to, in
// balancer.RouteHeader, in place of any the client sent (the value kept
// in vals, see headerValues.put).
func setRoute(h http.Header, sub *routing.Subset, vals *headerValues) {
	if sub == nil {
		delete(h, balancer.RouteHeader)
		return
	}
	vals.put(h, balancer.RouteHeader, sub.Label())
}

// setRegion tells the instance, in routing.RegionHeader, that its request
// crossed from another region ("": it did not, and a client's is removed).
func setRegion(h http.Header, region string, vals *headerValues) {
	if region == "" {
		delete(h, routing.RegionHeader)
		return
	}
	vals.put(h, routing.RegionHeader, region)
}

// unmarshalRules reads the Caddyfile's rules options: rules, a heredoc
// holding the document (YAML or JSON), checked and turned into JSON once
// the block is read (adaptRules), or the name of a file holding it, read
// when the config is provisioned; and the limits, each a number above 0.
//
//	rules <<YAML
//	apps:
//	  ORDERS: ...
//	YAML
//	rules /etc/caddy/rules.yaml
//	rules_max_bytes <n>
//	rules_max_rules <n>
//	rules_max_regex_size <n>
//	rules_max_echo <n>
func (t *TrafficRules) unmarshalRules(d *caddyfile.Dispenser) error {
	option := d.Val()
	if option != "rules" {
		dst := t.limitOption(option)
		if err := intArg(d, dst); err != nil {
			return err
		}
		if *dst <= 0 {
			return d.Errf("%s is %d: a limit is above 0", option, *dst)
		}
		return nil
	}
	var v string
	if !d.AllArgs(&v) {
		return d.Errf("rules takes a file, or the rules document in a heredoc (rules <<YAML ... YAML)")
	}
	if !strings.Contains(v, "\n") {
		t.RulesFile = v
		return nil
	}
	t.heredoc = v
	return nil
}

// rulesOption returns option if unmarshalRules reads it, else "".
func rulesOption(option string) string {
	if option == "rules" || new(TrafficRules).limitOption(option) != nil {
		return option
	}
	return ""
}

// adaptRules checks the Caddyfile's heredoc, once its block is read, with
// the block's limits, and turns it into JSON.
func (t *TrafficRules) adaptRules(d *caddyfile.Dispenser) error {
	if t.heredoc == "" {
		return nil
	}
	lim, err := t.limits("rules")
	if err != nil {
		return d.Err(err.Error())
	}
	lim.Shared = adaptShared
	if _, err := lim.Parse("heredoc", []byte(t.heredoc)); err != nil {
		return d.Errf("rules: %v", err)
	}
	raw, err := yamlToJSON([]byte(t.heredoc))
	if err != nil {
		return d.Errf("rules: %v", err)
	}
	t.Rules, t.heredoc = raw, ""
	return nil
}

// yamlToJSON returns a YAML document as JSON, its scalars as YAML typed
// them. The document has no alias: ParseRules, which refuses them, has
// read it.
func yamlToJSON(data []byte) (json.RawMessage, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil, err
	}
	var conv func(n *yaml.Node) (any, error)
	conv = func(n *yaml.Node) (any, error) {
		switch n.Kind {
		case yaml.DocumentNode:
			if len(n.Content) == 0 {
				return nil, nil
			}
			return conv(n.Content[0])
		case yaml.MappingNode:
			m := make(map[string]any, len(n.Content)/2)
			for i := 0; i+1 < len(n.Content); i += 2 {
				v, err := conv(n.Content[i+1])
				if err != nil {
					return nil, err
				}
				m[n.Content[i].Value] = v
			}
			return m, nil
		case yaml.SequenceNode:
			out := make([]any, len(n.Content))
			for i, c := range n.Content {
				v, err := conv(c)
				if err != nil {
					return nil, err
				}
				out[i] = v
			}
			return out, nil
		}
		var v any
		if n.Tag == "!!str" {
			return n.Value, nil
		}
		err := n.Decode(&v)
		return v, err
	}
	v, err := conv(&root)
	if err != nil {
		return nil, err
	}
	return json.Marshal(v)
}
