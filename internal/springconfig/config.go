// Package springconfig reads a Spring Boot application's configuration as
// Spring Boot finds it: application.properties, application.yml and
// application.yaml in a directory and its config/ folder (or the
// locations spring.config.location names), their documents and the
// profile files and documents spring.profiles.active selects, environment
// variables in Spring's form (SERVER_PORT) and --name=value arguments,
// with Spring's precedence (arguments over the environment over profile
// files over the base files; a later document over an earlier one),
// relaxed names (service-url, serviceUrl, service_url and SERVICEURL are
// one property) and ${name} and ${name:default} placeholders.
//
// It says nothing of what a property means: the commands that take a
// Spring configuration map the properties they know to their settings,
// and every property keeps its source (file:line, variable or argument)
// for their messages.
package springconfig

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// Source is where a property was read.
type Source struct {
	File string // the file, as Options.Dir-relative or as named
	Line int    // its line in File
	Var  string // the environment variable
	Arg  string // the command-line argument
}

// String is file:line, "variable NAME" or "argument --name".
func (s Source) String() string {
	switch {
	case s.Var != "":
		return "variable " + s.Var
	case s.Arg != "":
		return "argument " + s.Arg
	}
	return fmt.Sprintf("%s:%d", s.File, s.Line)
}

// Property is one name and value as a source gives it.
type Property struct {
	Name   string // as written (a variable's in Spring's form: server.port)
	Value  string // as written, placeholders unresolved
	Source Source
	doc    int // the document it came from; a list is one document's
}

// Options say where Load looks.
type Options struct {
	// Dir is the directory the default locations are relative to: the
	// working directory ("" is ".").
	Dir string
	// Args are the command's --name=value arguments (the leading dashes
	// included), the highest precedence.
	Args []string
	// Environ is the environment as os.Environ gives it, NAME=value. The
	// variables whose name starts with one of EnvRoots and an underscore
	// (EUREKA, SERVER, ...) are properties in Spring's form; every
	// variable can be named by a placeholder.
	Environ  []string
	EnvRoots []string
}

// Config is a loaded configuration.
type Config struct {
	props    []Property // lowest precedence first
	win      map[string]int
	env      map[string]string
	Profiles []string // the active profiles, in order
	Files    []string // the files read, in order of precedence (lowest first)
	// Notes are what loading did that a user may not expect, one line
	// each, to be logged: a document left out, Boot 2's spring.profiles
	// read as spring.config.activate.on-profile.
	Notes []string
}

// Load reads the configuration.
func Load(o Options) (*Config, error) {
	c := &Config{win: map[string]int{}, env: map[string]string{}}
	docID := 0
	var envProps, argProps []Property
	for _, kv := range o.Environ {
		name, value, ok := strings.Cut(kv, "=")
		if !ok {
			continue
		}
		c.env[name] = value
		for _, root := range o.EnvRoots {
			if strings.HasPrefix(name, root+"_") {
				envProps = append(envProps, Property{Name: EnvName(name), Value: value, Source: Source{Var: name}, doc: -1})
				break
			}
		}
	}
	slices.SortFunc(envProps, func(a, b Property) int { return cmp.Compare(a.Source.Var, b.Source.Var) })
	for _, a := range o.Args {
		name, value, ok := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !ok || name == "" {
			return nil, fmt.Errorf("argument %s: write it as --name=value", a)
		}
		argProps = append(argProps, Property{Name: name, Value: value, Source: Source{Arg: "--" + name}, doc: -2})
	}
	// The settings that find the files come from the arguments and the
	// environment only, as in Spring Boot.
	early := func(name string) (string, bool) {
		n := Canonical(name)
		for _, ps := range [][]Property{argProps, envProps} {
			for i := len(ps) - 1; i >= 0; i-- {
				if Canonical(ps[i].Name) == n {
					return ps[i].Value, true
				}
			}
		}
		return "", false
	}
	locs, err := locations(o.Dir, early)
	if err != nil {
		return nil, err
	}
	base, err := readAll(locs, "")
	if err != nil {
		return nil, err
	}
	// The active profiles: an argument's or variable's, else the base
	// documents' (the last that sets it), as Spring Boot reads them
	// before the profile files.
	profiles, set := early("spring.profiles.active")
	if !set {
		for _, d := range base {
			if d.onProfile != nil || d.cloud != nil {
				continue
			}
			for _, p := range d.props {
				if Canonical(p.Name) == Canonical("spring.profiles.active") {
					profiles = p.Value
				}
			}
		}
	}
	for p := range strings.SplitSeq(profiles, ",") {
		if p = strings.TrimSpace(p); p != "" && !slices.Contains(c.Profiles, p) {
			c.Profiles = append(c.Profiles, p)
		}
	}
	docs := base
	for _, p := range c.Profiles {
		pd, err := readAll(locs, p)
		if err != nil {
			return nil, err
		}
		docs = append(docs, pd...)
	}
	for _, d := range docs {
		if !slices.Contains(c.Files, d.file) {
			c.Files = append(c.Files, d.file)
		}
		if d.onProfile != nil && Canonical(d.onProfile.Name) == legacyProfileName {
			c.Notes = append(c.Notes, fmt.Sprintf("%s: spring.profiles: read as spring.config.activate.on-profile, Spring Boot 2's spelling of it", d.onProfile.Source))
		}
		ok, note, err := d.activeFor(c.Profiles)
		if err != nil {
			return nil, err
		}
		if note != "" {
			c.Notes = append(c.Notes, note)
		}
		if !ok {
			continue
		}
		docID++
		for _, p := range d.props {
			p.doc = docID
			c.props = append(c.props, p)
		}
	}
	c.props = append(c.props, envProps...)
	c.props = append(c.props, argProps...)
	for i, p := range c.props {
		c.win[Canonical(p.Name)] = i
	}
	return c, nil
}

// Properties returns every property that won over the others of its
// name, by name.
func (c *Config) Properties() []Property {
	var out []Property
	for _, i := range c.win {
		out = append(out, c.props[i])
	}
	slices.SortFunc(out, func(a, b Property) int { return cmp.Compare(Canonical(a.Name), Canonical(b.Name)) })
	return out
}

// Shadowed returns the properties of the name that a higher source
// overrode, highest first.
func (c *Config) Shadowed(name string) []Property {
	n := Canonical(name)
	var out []Property
	for i := c.win[n] - 1; i >= 0; i-- {
		if Canonical(c.props[i].Name) == n {
			out = append(out, c.props[i])
		}
	}
	return out
}

// Lookup returns the property of the name (in any relaxed form) that
// wins, with its value's placeholders resolved.
func (c *Config) Lookup(name string) (Property, bool, error) {
	i, ok := c.win[Canonical(name)]
	if !ok {
		return Property{}, false, nil
	}
	p := c.props[i]
	v, err := c.Resolve(p)
	p.Value = v
	return p, true, err
}

// List returns a list property: a comma-separated value, or items
// name[0], name[1]... of one document, whichever source wins, each
// placeholder resolved. The source is its first item's.
func (c *Config) List(name string) ([]string, Source, bool, error) {
	n := Canonical(name)
	for i := len(c.props) - 1; i >= 0; i-- {
		p := c.props[i]
		pn := Canonical(p.Name)
		if pn == n {
			v, err := c.Resolve(p)
			if err != nil {
				return nil, p.Source, true, err
			}
			return splitComma(v), p.Source, true, nil
		}
		if !strings.HasPrefix(pn, n+"[") {
			continue
		}
		var items []string
		var src Source
		for _, q := range c.props {
			if q.doc == p.doc && strings.HasPrefix(Canonical(q.Name), n+"[") {
				v, err := c.Resolve(q)
				if err != nil {
					return nil, q.Source, true, err
				}
				if len(items) == 0 {
					src = q.Source
				}
				items = append(items, strings.TrimSpace(v))
			}
		}
		return items, src, true, nil
	}
	return nil, Source{}, false, nil
}

// Entry is one key of a map property.
type Entry struct {
	Key      string // as written after the map's name: defaultZone
	Property Property
}

// Map returns the keys under a map property's name (eureka.client.
// service-url: defaultZone, zone1...), each the winner of its key, keys
// compared as relaxed names. A list under a key (key[0]) is one entry,
// read with List.
func (c *Config) Map(name string) []Entry {
	n := Canonical(name) + "."
	seen := map[string]bool{}
	var out []Entry
	for i := len(c.props) - 1; i >= 0; i-- {
		p := c.props[i]
		pn := Canonical(p.Name)
		if !strings.HasPrefix(pn, n) {
			continue
		}
		// The key as written: the name's elements after the map's.
		key := p.Name[len(p.Name)-keyLen(p.Name, strings.Count(n, ".")):]
		if j := strings.IndexByte(key, '['); j >= 0 {
			key = key[:j]
		}
		if seen[Canonical(key)] {
			continue
		}
		seen[Canonical(key)] = true
		out = append(out, Entry{Key: key, Property: p})
	}
	slices.SortFunc(out, func(a, b Entry) int { return cmp.Compare(Canonical(a.Key), Canonical(b.Key)) })
	return out
}

// keyLen is the length of name after its first skip elements and their
// dots.
func keyLen(name string, skip int) int {
	rest := name
	for range skip {
		_, rest, _ = strings.Cut(rest, ".")
	}
	return len(rest)
}

func splitComma(v string) []string {
	var out []string
	for s := range strings.SplitSeq(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}
