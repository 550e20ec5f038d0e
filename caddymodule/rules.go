package caddymodule

import (
	"encoding/json"
	"errors"
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
// again: a document that does not parse or validate fails the reload, and
// the config in force keeps its rules.
type TrafficRules struct {
	// Rules is the rules document, inline, as JSON.
	Rules json.RawMessage `json:"rules,omitempty"`
	// RulesFile is a file holding the rules document, YAML or JSON.
	RulesFile string `json:"rules_file,omitempty"`
}

// load parses the rules; nil when there are none.
func (t TrafficRules) load(module string) (*routing.Rules, error) {
	switch {
	case len(t.Rules) > 0 && t.RulesFile != "":
		return nil, errors.New(module + ": rules and rules_file are both set; set one")
	case len(t.Rules) > 0:
		return routing.ParseRules(module+" rules", t.Rules)
	case t.RulesFile != "":
		return routing.LoadRules(t.RulesFile)
	}
	return nil, nil
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
// balancer.RouteHeader, in place of any the client sent.
func setRoute(h http.Header, sub *routing.Subset) {
	if sub == nil {
		h.Del(balancer.RouteHeader)
		return
	}
	h.Set(balancer.RouteHeader, sub.Label())
}

// setRegion tells the instance, in routing.RegionHeader, that its request
// crossed from another region ("": it did not, and a client's is removed).
func setRegion(h http.Header, region string) {
	if region == "" {
		h.Del(routing.RegionHeader)
		return
	}
	h.Set(routing.RegionHeader, region)
}

// unmarshalRules reads the Caddyfile's rules option: a heredoc holding
// the document (YAML or JSON), checked and turned into JSON, or the name
// of a file holding it, read when the config is provisioned.
//
//	rules <<YAML
//	apps:
//	  ORDERS: ...
//	YAML
//	rules /etc/caddy/rules.yaml
func (t *TrafficRules) unmarshalRules(d *caddyfile.Dispenser) error {
	var v string
	if !d.AllArgs(&v) {
		return d.Errf("rules takes a file, or the rules document in a heredoc (rules <<YAML ... YAML)")
	}
	if !strings.Contains(v, "\n") {
		t.RulesFile = v
		return nil
	}
	if _, err := routing.ParseRules("heredoc", []byte(v)); err != nil {
		return d.Errf("rules: %v", err)
	}
	raw, err := yamlToJSON([]byte(v))
	if err != nil {
		return d.Errf("rules: %v", err)
	}
	t.Rules = raw
	return nil
}

// yamlToJSON returns a YAML document as JSON, its scalars as YAML typed
// them.
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
		case yaml.AliasNode:
			return conv(n.Alias)
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
