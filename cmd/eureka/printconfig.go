package main

import (
	"flag"
	"fmt"
	"net/url"
	"strings"
	"text/tabwriter"
)

// effectiveConfig is -print-config's text: one line per setting, its
// value and where it came from (a flag, a variable, a Spring property's
// file:line, or the default); a password (of a key store, in a URL)
// shows as ****.
func effectiveConfig(fs *flag.FlagSet, src map[string]string, spring *springSettings, overrides []string) string {
	var b strings.Builder
	w := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
	fs.VisitAll(func(f *flag.Flag) {
		if f.Name == "print-config" {
			return
		}
		from, ok := src[f.Name]
		if !ok {
			from = "default"
		}
		v := hidePasswords(f.Value.String())
		if strings.HasSuffix(f.Name, "-password") && v != "" {
			v = "****"
		}
		fmt.Fprintf(w, "-%s\t%s\t%s\n", f.Name, v, from)
	})
	w.Flush()
	for _, o := range overrides {
		fmt.Fprintln(&b, o)
	}
	if spring != nil {
		if p := spring.Conf.Profiles; len(p) > 0 {
			fmt.Fprintf(&b, "profiles: %s\n", strings.Join(p, ", "))
		}
		if f := spring.Conf.Files; len(f) > 0 {
			fmt.Fprintf(&b, "files: %s\n", strings.Join(f, ", "))
		}
		for _, n := range spring.Notes {
			fmt.Fprintln(&b, n)
		}
	}
	return b.String()
}

// hidePasswords replaces the password of each URL in a comma-separated
// value with ****.
func hidePasswords(v string) string {
	parts := strings.Split(v, ",")
	for i, p := range parts {
		u, err := url.Parse(strings.TrimSpace(p))
		if err != nil || u.User == nil {
			continue
		}
		if _, has := u.User.Password(); has {
			u.User = url.UserPassword(u.User.Username(), "****")
			parts[i] = strings.Replace(u.String(), "%2A%2A%2A%2A", "****", 1)
		}
	}
	return strings.Join(parts, ",")
}

// splitSpringArgs takes the arguments in Spring's form, --name=value
// with a dot in the name (--server.port=8762,
// --spring.config.location=...), from ours, up to a "--".
func splitSpringArgs(args []string) (ours, spring []string) {
	for i, a := range args {
		if a == "--" {
			return append(ours, args[i:]...), spring
		}
		name, _, hasValue := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if strings.HasPrefix(a, "--") && hasValue && strings.Contains(name, ".") {
			spring = append(spring, a)
			continue
		}
		ours = append(ours, a)
	}
	return ours, spring
}
