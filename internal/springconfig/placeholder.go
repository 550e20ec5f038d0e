package springconfig

import (
	"fmt"
	"strings"
)

// maxDepth bounds nested and chained placeholders: deeper is a cycle.
const maxDepth = 32

// Resolve returns p's value with its ${name} and ${name:default}
// placeholders replaced as Spring does: by the property of that name
// (relaxed), else the environment variable of that exact name or of its
// Spring form (HOSTNAME, SERVER_PORT), else the default; a placeholder
// with none of them is an error naming p's source.
func (c *Config) Resolve(p Property) (string, error) {
	v, err := c.resolve(p.Value, 0)
	if err != nil {
		return "", fmt.Errorf("%s: %s: %v", p.Source, p.Name, err)
	}
	return v, nil
}

func (c *Config) resolve(v string, depth int) (string, error) {
	if !strings.Contains(v, "${") {
		return v, nil
	}
	if depth > maxDepth {
		return "", fmt.Errorf("placeholders nested more than %d deep (a cycle?)", maxDepth)
	}
	var b strings.Builder
	for {
		i := strings.Index(v, "${")
		if i < 0 {
			b.WriteString(v)
			return b.String(), nil
		}
		b.WriteString(v[:i])
		end := closing(v, i+2)
		if end < 0 {
			return "", fmt.Errorf("%q: a ${ without its }", v)
		}
		inner, err := c.resolve(v[i+2:end], depth+1)
		if err != nil {
			return "", err
		}
		name, def, hasDef := strings.Cut(inner, ":")
		val, ok := c.value(name)
		switch {
		case ok:
			val, err = c.resolve(val, depth+1)
			if err != nil {
				return "", err
			}
		case hasDef:
			val = def
		default:
			return "", fmt.Errorf("could not resolve placeholder ${%s}: no property or environment variable of that name, and no default (${%s:default})", name, name)
		}
		b.WriteString(val)
		v = v[end+1:]
	}
}

// closing returns the index of the } that closes the placeholder whose
// name starts at from, past nested placeholders.
func closing(v string, from int) int {
	depth := 0
	for i := from; i < len(v); i++ {
		switch {
		case strings.HasPrefix(v[i:], "${"):
			depth++
			i++
		case v[i] == '}':
			if depth == 0 {
				return i
			}
			depth--
		}
	}
	return -1
}

func (c *Config) value(name string) (string, bool) {
	if i, ok := c.win[Canonical(name)]; ok {
		return c.props[i].Value, true
	}
	if v, ok := c.env[name]; ok {
		return v, true
	}
	v, ok := c.env[VariableName(name)]
	return v, ok
}
