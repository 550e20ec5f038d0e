package springeureka

import (
	"fmt"
	"net"
	"regexp"
	"strconv"
	"strings"

	"github.com/eurekagate/eurekagate/internal/springconfig"
	"github.com/eurekagate/eurekagate/registry/actuator"
	"github.com/eurekagate/eurekagate/registry/httpapi"
)

// EnvRoots are the first elements of the environment variables read
// as Spring properties (SERVER_PORT); EUREKA_<FLAG> variables are
// cmd/eureka's own.
var EnvRoots = []string{"EUREKA", "SERVER", "SPRING", "MANAGEMENT"}

// Assignment is a setting's value from a Spring configuration.
type Assignment struct {
	// Setting is the setting, by the name of cmd/eureka's flag
	// (eviction-interval); Value is written as that flag reads it (1s).
	Setting, Value string
	From           string // file:line and property, for messages and -print-config
	Arg            bool   // from a --name=value argument: over the environment
}

// Settings are what a Spring configuration sets: the settings' values,
// the host the server knows itself by, and one line per property read
// and not applied.
type Settings struct {
	Assign   []Assignment
	SelfHost string // eureka.instance.hostname
	Notes    []string
	Conf     *springconfig.Config
}

// Read loads the Spring configuration in dir (application.yml and the
// rest, see internal/springconfig) with the arguments and the variables
// in Spring's form (leaving out those ours names), and maps every
// property it knows to the settings.
func Read(dir string, args, environ []string, ours func(variable string) bool) (*Settings, error) {
	var env []string
	for _, kv := range environ {
		if name, _, _ := strings.Cut(kv, "="); !ours(name) {
			env = append(env, kv)
		}
	}
	conf, err := springconfig.Load(springconfig.Options{Dir: dir, Args: args, Environ: env, EnvRoots: EnvRoots})
	if err != nil {
		return nil, err
	}
	s := &Settings{Conf: conf, Notes: conf.Notes}
	if err := s.mapAll(); err != nil {
		return nil, err
	}
	return s, nil
}

// Known returns the catalogue's entry for a property name, matching a
// family (name.*) by its prefix; list items (name[0]) are their list's.
func Known(name string) (Property, bool) {
	c := springconfig.Canonical(name)
	if i := strings.IndexByte(c, '['); i >= 0 {
		c = c[:i]
	}
	var family Property
	famLen := -1
	for _, p := range Properties {
		pc := springconfig.Canonical(p.Name)
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
func (s *Settings) mapAll() error {
	for _, p := range s.Conf.Properties() {
		k, ok := Known(p.Name)
		switch {
		case !ok:
			s.Notes = append(s.Notes, unknownLine(p))
		case k.ignored != "":
			s.Notes = append(s.Notes, fmt.Sprintf("%s: %s: ignored (no effect here: %s)", p.Source, p.Name, k.ignored))
		case k.flag != "":
			q, _, err := s.Conf.Lookup(p.Name)
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
	for _, f := range []func() error{s.address, s.contextPath, s.peers, s.dashboard, s.security, s.authz, s.ssl, s.remoteRegions, s.management} {
		if err := f(); err != nil {
			return err
		}
	}
	return nil
}

func (s *Settings) add(flagName, value string, p springconfig.Property) {
	s.Assign = append(s.Assign, Assignment{Setting: flagName, Value: value, From: fmt.Sprintf("%s %s", p.Source, p.Name), Arg: p.Source.Arg != ""})
}

// unknownLine names a property this server does not know, with the known
// name closest to it when it looks like a typo.
func unknownLine(p springconfig.Property) string {
	names := make([]string, 0, len(Properties))
	for _, k := range Properties {
		names = append(names, strings.TrimSuffix(k.Name, ".*"))
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
func (s *Settings) lookup(name string) (springconfig.Property, bool, error) {
	return s.Conf.Lookup(name)
}

// pair is two properties that make one setting, as found.
type pair struct {
	a, b       springconfig.Property
	hasA, hasB bool
}

// pair looks up the properties a and b.
func (s *Settings) pair(a, b string) (pair, error) {
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
func (s *Settings) address() error {
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
	s.Assign = append(s.Assign, Assignment{Setting: "addr", Value: net.JoinHostPort(host, strconv.Itoa(port)), From: p.from(), Arg: p.arg()})
	return nil
}

// contextPath maps server.servlet.context-path to -prefix: Spring serves
// the API under <context-path>/eureka, and the actuator, when it shares
// the server's port, under <context-path> and its base path
// (-actuator-path).
func (s *Settings) contextPath() error {
	p, ok, err := s.lookup("server.servlet.context-path")
	if !ok || err != nil {
		return err
	}
	ctx := strings.Trim(strings.TrimSpace(p.Value), "/")
	if ctx == "" {
		return nil
	}
	s.add("prefix", "/"+ctx+"/eureka", p)
	if _, own, err := s.lookup("management.server.port"); own || err != nil {
		return err
	}
	base, hasBase, err := s.lookup("management.endpoints.web.base-path")
	if err != nil {
		return err
	}
	path := actuator.DefaultBasePath
	if hasBase {
		path = "/" + strings.Trim(strings.TrimSpace(base.Value), "/")
	}
	s.add("actuator-path", "/"+ctx+path, p)
	return nil
}

// dashboard maps eureka.dashboard.enabled: false to -dashboard-path off.
func (s *Settings) dashboard() error {
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
func (s *Settings) security() error {
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
	s.Assign = append(s.Assign,
		Assignment{Setting: "auth-users", Value: user + ":" + hash, From: p.from(), Arg: p.arg()},
		Assignment{Setting: "auth-reads", Value: "true", From: p.from(), Arg: p.arg()})
	return nil
}
