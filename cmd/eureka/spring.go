package main

import (
	"flag"
	"fmt"
	"net"
	"regexp"
	"strconv"
	"strings"

	"github.com/eurekagate/eurekagate/internal/springconfig"
	"github.com/eurekagate/eurekagate/registry/httpapi"
)

// springRoots are the first elements of the environment variables read
// as Spring properties (SERVER_PORT); EUREKA_<FLAG> variables are ours.
var springRoots = []string{"EUREKA", "SERVER", "SPRING", "MANAGEMENT"}

// assignment is a flag's value from Spring's configuration.
type assignment struct {
	flag, value string
	from        string // file:line and property, for messages and -print-config
	arg         bool   // from a --name=value argument: over the environment
}

// springSettings is what a Spring configuration sets: flags' values,
// the accounts, the self address, and one line per property read and not
// applied.
type springSettings struct {
	assign   []assignment
	selfHost string // eureka.instance.hostname
	notes    []string
	conf     *springconfig.Config
}

// readSpring loads the Spring configuration in dir (application.yml and
// the rest, see internal/springconfig) with the arguments and variables
// in Spring's form, and maps every property it knows to the flags.
func readSpring(dir string, args, environ []string, ours func(variable string) bool) (*springSettings, error) {
	var env []string
	for _, kv := range environ {
		if name, _, _ := strings.Cut(kv, "="); !ours(name) {
			env = append(env, kv)
		}
	}
	conf, err := springconfig.Load(springconfig.Options{Dir: dir, Args: args, Environ: env, EnvRoots: springRoots})
	if err != nil {
		return nil, err
	}
	s := &springSettings{conf: conf, notes: conf.Notes}
	if err := s.mapAll(); err != nil {
		return nil, err
	}
	return s, nil
}

// known returns the catalogue's entry for a property name, matching a
// family (name.*) by its prefix; list items (name[0]) are their list's.
func known(name string) (springProperty, bool) {
	c := springconfig.Canonical(name)
	if i := strings.IndexByte(c, '['); i >= 0 {
		c = c[:i]
	}
	var family springProperty
	famLen := -1
	for _, p := range springProperties {
		pc := springconfig.Canonical(p.name)
		if base, ok := strings.CutSuffix(pc, ".*"); ok {
			if strings.HasPrefix(c, base+".") && len(base) > famLen {
				family, famLen = p, len(base)
			}
			continue
		}
		if pc == c {
			return p, true
		}
	}
	return family, famLen >= 0
}

// mapAll maps every winning property: a flag's value, a special
// property's code, a line for an ignored or unknown one, or an error
// file:line: property: reason for a value of the wrong type.
func (s *springSettings) mapAll() error {
	for _, p := range s.conf.Properties() {
		k, ok := known(p.Name)
		switch {
		case !ok:
			s.notes = append(s.notes, unknownLine(p))
		case k.ignored != "":
			s.notes = append(s.notes, fmt.Sprintf("%s: %s: ignored (no effect here: %s)", p.Source, p.Name, k.ignored))
		case k.flag != "":
			q, _, err := s.conf.Lookup(p.Name)
			if err != nil {
				return err
			}
			v, err := convert(k.unit, q.Value)
			if err != nil {
				return fmt.Errorf("%s: %s: %v", p.Source, p.Name, err)
			}
			s.add(k.flag, v, q)
		}
	}
	for _, f := range []func() error{s.address, s.contextPath, s.peers, s.dashboard, s.security, s.ssl, s.remoteRegions, s.management} {
		if err := f(); err != nil {
			return err
		}
	}
	return nil
}

func (s *springSettings) add(flagName, value string, p springconfig.Property) {
	s.assign = append(s.assign, assignment{flag: flagName, value: value, from: fmt.Sprintf("%s %s", p.Source, p.Name), arg: p.Source.Arg != ""})
}

// unknownLine names a property this server does not know, with the known
// name closest to it when it looks like a typo.
func unknownLine(p springconfig.Property) string {
	names := make([]string, 0, len(springProperties))
	for _, k := range springProperties {
		names = append(names, strings.TrimSuffix(k.name, ".*"))
	}
	line := fmt.Sprintf("%s: %s: unknown property", p.Source, p.Name)
	if c, ok := springconfig.Closest(p.Name, names); ok {
		if p.Source.Var != "" {
			c += ", " + springconfig.VariableName(c)
		}
		line += " (closest known: " + c + ")"
	}
	return line
}

// convert writes a Spring value as its flag reads it: Spring's booleans,
// and -ms and -seconds numbers as durations.
func convert(u unit, v string) (string, error) {
	v = strings.TrimSpace(v)
	switch u {
	case boolean:
		switch strings.ToLower(v) {
		case "true", "yes", "on", "1":
			return "true", nil
		case "false", "no", "off", "0":
			return "false", nil
		}
		return "", fmt.Errorf("%q is not true or false", v)
	case millis, seconds:
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			what := "milliseconds"
			if u == seconds {
				what = "seconds"
			}
			return "", fmt.Errorf("%q is not a whole number of %s", v, what)
		}
		if u == seconds {
			return v + "s", nil
		}
		return v + "ms", nil
	}
	return v, nil
}

// lookup is Lookup of a property the code reads itself.
func (s *springSettings) lookup(name string) (springconfig.Property, bool, error) {
	return s.conf.Lookup(name)
}

// pair is two properties that make one setting, as found.
type pair struct {
	a, b       springconfig.Property
	hasA, hasB bool
}

// pair looks up the properties a and b.
func (s *springSettings) pair(a, b string) (pair, error) {
	var p pair
	var err error
	if p.a, p.hasA, err = s.lookup(a); err != nil {
		return p, err
	}
	p.b, p.hasB, err = s.lookup(b)
	return p, err
}

// from names where the properties found came from.
func (p pair) from() string {
	var from []string
	if p.hasA {
		from = append(from, fmt.Sprintf("%s %s", p.a.Source, p.a.Name))
	}
	if p.hasB {
		from = append(from, fmt.Sprintf("%s %s", p.b.Source, p.b.Name))
	}
	return strings.Join(from, ", ")
}

// arg reports whether one of them is an argument's.
func (p pair) arg() bool {
	return (p.hasA && p.a.Source.Arg != "") || (p.hasB && p.b.Source.Arg != "")
}

// portOf reads a port property; -1 too when off is what it means.
func portOf(p springconfig.Property, off string) (int, error) {
	n, err := strconv.Atoi(strings.TrimSpace(p.Value))
	switch {
	case err == nil && n >= 0 && n <= 65535, err == nil && n == -1 && off != "":
		return n, nil
	case off != "":
		return 0, fmt.Errorf("%s: %s: %q is not a port (0 to 65535, or -1 for %s)", p.Source, p.Name, p.Value, off)
	}
	return 0, fmt.Errorf("%s: %s: %q is not a port (0 to 65535)", p.Source, p.Name, p.Value)
}

// address maps server.port and server.address to -addr.
func (s *springSettings) address() error {
	p, err := s.pair("server.port", "server.address")
	if err != nil || (!p.hasA && !p.hasB) {
		return err
	}
	port, host := 8761, ""
	if p.hasA {
		if port, err = portOf(p.a, ""); err != nil {
			return err
		}
	}
	if p.hasB {
		host = strings.TrimSpace(p.b.Value)
	}
	s.assign = append(s.assign, assignment{flag: "addr", value: net.JoinHostPort(host, strconv.Itoa(port)), from: p.from(), arg: p.arg()})
	return nil
}

// contextPath maps server.servlet.context-path to -prefix: Spring serves
// the API under <context-path>/eureka.
func (s *springSettings) contextPath() error {
	p, ok, err := s.lookup("server.servlet.context-path")
	if !ok || err != nil {
		return err
	}
	ctx := strings.Trim(strings.TrimSpace(p.Value), "/")
	if ctx == "" {
		return nil
	}
	s.add("prefix", "/"+ctx+"/eureka", p)
	return nil
}

// dashboard maps eureka.dashboard.enabled: false to -dashboard-path off.
func (s *springSettings) dashboard() error {
	p, ok, err := s.lookup("eureka.dashboard.enabled")
	if !ok || err != nil {
		return err
	}
	v, err := convert(boolean, p.Value)
	if err != nil {
		return fmt.Errorf("%s: %s: %v", p.Source, p.Name, err)
	}
	if v == "false" {
		s.add("dashboard-path", "off", p)
	}
	return nil
}

// passwordID is the {id} prefix of Spring's DelegatingPasswordEncoder.
var passwordID = regexp.MustCompile(`^\{([^}]*)\}`)

// security maps spring.security.user.name and .password to an account
// of -auth-users, needed on reads too (-auth-reads): Spring Security's
// defaults protect every request.
func (s *springSettings) security() error {
	p, err := s.pair("spring.security.user.name", "spring.security.user.password")
	name, pw := p.a, p.b
	switch {
	case err != nil || (!p.hasA && !p.hasB):
		return err
	case !p.hasB:
		return fmt.Errorf("%s: %s: set without spring.security.user.password: Spring would make one up at random, which no client knows; give the password", name.Source, name.Name)
	}
	user := "user"
	if p.hasA {
		user = strings.TrimSpace(name.Value)
	}
	hash := ""
	switch m := passwordID.FindStringSubmatch(pw.Value); {
	case m == nil || m[1] == "noop":
		plain := strings.TrimPrefix(pw.Value, "{noop}")
		if plain == "" {
			return fmt.Errorf("%s: %s: empty", pw.Source, pw.Name)
		}
		if hash, err = httpapi.HashPassword(plain); err != nil {
			return fmt.Errorf("%s: %s: %v", pw.Source, pw.Name, err)
		}
	case m[1] == "bcrypt":
		hash = strings.TrimPrefix(pw.Value, m[0])
	default:
		return fmt.Errorf("%s: %s: {%s} passwords are not read here; give {bcrypt}<hash> (eureka -hash-password makes one), {noop}<password> or the plain password", pw.Source, pw.Name, m[1])
	}
	s.assign = append(s.assign,
		assignment{flag: "auth-users", value: user + ":" + hash, from: p.from(), arg: p.arg()},
		assignment{flag: "auth-reads", value: "true", from: p.from(), arg: p.arg()})
	return nil
}

// apply sets the flags of the properties not given as arguments (those
// go over our variables, see args), recording where each value came
// from.
func (s *springSettings) apply(fs *flag.FlagSet, src map[string]string) error {
	if s == nil {
		return nil
	}
	for _, a := range s.assign {
		if a.arg {
			continue
		}
		if err := fs.Lookup(a.flag).Value.Set(a.value); err != nil {
			return fmt.Errorf("%s: %v", a.from, err)
		}
		src[a.flag] = a.from
	}
	return nil
}

// args are the assignments of --name=value arguments.
func (s *springSettings) args() []assignment {
	if s == nil {
		return nil
	}
	var out []assignment
	for _, a := range s.assign {
		if a.arg {
			out = append(out, a)
		}
	}
	return out
}

// blame prefixes an error about a flag set by a Spring property with the
// property's file:line and name, so that a value refused after parsing
// (a threshold out of range) names the line to fix.
func (s *springSettings) blame(err error) error {
	if s == nil || err == nil {
		return err
	}
	for _, a := range s.assign {
		if regexp.MustCompile(`(^|[^a-z-])-` + regexp.QuoteMeta(a.flag) + `([^a-z-]|$)`).MatchString(err.Error()) {
			return fmt.Errorf("%s: %w", a.from, err)
		}
	}
	return err
}
