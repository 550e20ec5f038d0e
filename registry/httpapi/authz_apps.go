package httpapi

// The bindings' apps (AuthConfig.Apps, CertApps): names and * patterns,
// matched, and checked at start.

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// appSet is a binding's apps: names, and patterns with *, upper case.
type appSet struct {
	names    map[string]struct{}
	patterns []string
	list     []string // as configured, upper case: what MayWrite tells
}

func newAppSet(apps []string) appSet {
	s := appSet{names: map[string]struct{}{}}
	for _, p := range apps {
		p = strings.ToUpper(strings.TrimSpace(p))
		s.list = append(s.list, p)
		if strings.Contains(p, "*") {
			s.patterns = append(s.patterns, p)
		} else {
			s.names[p] = struct{}{}
		}
	}
	return s
}

// has reports whether app (upper case, as routes hold it) is in the set.
func (s appSet) has(app string) bool {
	if _, ok := s.names[app]; ok {
		return true
	}
	for _, p := range s.patterns {
		if globMatch(p, app) {
			return true
		}
	}
	return false
}

// globMatch matches s against pattern, where * stands for any run of
// characters (none included) and every other character for itself.
func globMatch(pattern, s string) bool {
	first, rest, star := strings.Cut(pattern, "*")
	if !star {
		return pattern == s
	}
	if !strings.HasPrefix(s, first) {
		return false
	}
	s = s[len(first):]
	for { // each piece between stars at its first place, the last at the end; no allocation
		p, more, star := strings.Cut(rest, "*")
		if !star {
			return strings.HasSuffix(s, p)
		}
		n := strings.Index(s, p)
		if n < 0 {
			return false
		}
		s, rest = s[n+len(p):], more
	}
}

// checkPattern refuses an app name or pattern that could match nothing
// a client registers: empty, or with a character no app name may hold in
// a request path.
func checkPattern(p string) error {
	switch {
	case strings.TrimSpace(p) == "":
		return errors.New("an empty app name")
	case strings.ContainsAny(p, "/?#% \t"):
		return fmt.Errorf("%q is not an app name or a pattern (letters, digits, - _ . and * only)", p)
	}
	return nil
}

// checkBindings is Check's part for the bindings: each bound account and
// each operator is a user of Users (the peer keeps full rights and is
// never bound), each certificate name is not empty, and each app is a
// name or a pattern.
func (c *AuthConfig) checkBindings() error {
	isUser := func(name string) bool {
		return c.ExternalUsers || slices.ContainsFunc(c.Users, func(a Account) bool { return a.Username == name })
	}
	for _, user := range slices.Sorted(maps.Keys(c.Apps)) {
		if !isUser(user) {
			return fmt.Errorf("-auth-apps: %q is not an account: a binding names one of the accounts' user names", user)
		}
		if err := checkApps(c.Apps[user]); err != nil {
			return fmt.Errorf("-auth-apps: %s: %v", user, err)
		}
	}
	for _, name := range slices.Sorted(maps.Keys(c.CertApps)) {
		if strings.TrimSpace(name) == "" {
			return errors.New("-auth-apps: a certificate binding has no name")
		}
		if err := checkApps(c.CertApps[name]); err != nil {
			return fmt.Errorf("-auth-apps: cert:%s: %v", name, err)
		}
	}
	for _, op := range c.Operators {
		if !isUser(op) {
			return fmt.Errorf("-auth-operators: %q is not an account: an operator is one of the accounts' user names", op)
		}
	}
	return nil
}

func checkApps(apps []string) error {
	if len(apps) == 0 {
		return errors.New("no app: bind at least one app name or pattern")
	}
	for _, p := range apps {
		if err := checkPattern(p); err != nil {
			return err
		}
	}
	return nil
}
