package springconfig

import (
	"fmt"
	"strings"
)

// document is one document of a file: a YAML document between "---"
// lines, or a part of a .properties file between "#---" lines, as Spring
// Boot splits them. Later documents override earlier ones.
type document struct {
	file  string // as the user would name it
	props []Property
	// onProfile is spring.config.activate.on-profile (or Boot 2's
	// spring.profiles) of the document: it applies only while the
	// profiles it names are active.
	onProfile *Property
	// cloud is spring.config.activate.on-cloud-platform: such a
	// document applies on that platform only, which this server does
	// not detect.
	cloud *Property
}

// Names that place a document rather than set a setting.
var (
	onProfileName     = Canonical("spring.config.activate.on-profile")
	legacyProfileName = Canonical("spring.profiles")
	onCloudName       = Canonical("spring.config.activate.on-cloud-platform")
)

// add appends a property read from the document's file, taking the
// names that activate the document aside.
func (d *document) add(name, value string, line int) {
	p := Property{Name: name, Value: value, Source: Source{File: d.file, Line: line}}
	switch Canonical(name) {
	case onProfileName, legacyProfileName:
		d.onProfile = &p
	case onCloudName:
		d.cloud = &p
	default:
		d.props = append(d.props, p)
	}
}

// activeFor reports whether the document applies with the profiles
// active, and a note to log when it is left out for a reason the user may
// not expect.
func (d *document) activeFor(active []string) (bool, string, error) {
	if d.cloud != nil {
		return false, fmt.Sprintf("%s: %s: the document is left out: this server does not detect a cloud platform", d.cloud.Source, d.cloud.Name), nil
	}
	if d.onProfile == nil {
		return true, "", nil
	}
	ok, err := matchProfiles(d.onProfile.Value, active)
	if err != nil {
		return false, "", fmt.Errorf("%s: %s: %v", d.onProfile.Source, d.onProfile.Name, err)
	}
	return ok, "", nil
}

// matchProfiles evaluates a profile expression as Spring's Profiles.of
// does for the forms without parentheses: a comma list of alternatives,
// each alternative either a profile, !profile, or profiles joined by |
// (any) or & (all).
func matchProfiles(expr string, active []string) (bool, error) {
	if strings.ContainsAny(expr, "()") {
		return false, fmt.Errorf("%q: profile expressions with parentheses are not read here; list the profiles separated by commas", expr)
	}
	has := func(p string) (bool, error) {
		p = strings.TrimSpace(p)
		neg := strings.HasPrefix(p, "!")
		p = strings.TrimSpace(strings.TrimPrefix(p, "!"))
		if p == "" {
			return false, fmt.Errorf("%q names an empty profile", expr)
		}
		in := false
		for _, a := range active {
			if a == p {
				in = true
			}
		}
		return in != neg, nil
	}
	for alt := range strings.SplitSeq(expr, ",") {
		var ok bool
		var err error
		switch {
		case strings.Contains(alt, "&") && strings.Contains(alt, "|"):
			return false, fmt.Errorf("%q mixes & and | without parentheses", expr)
		case strings.Contains(alt, "&"):
			ok = true
			for p := range strings.SplitSeq(alt, "&") {
				m, e := has(p)
				ok, err = ok && m, cmpErr(err, e)
			}
		default:
			for p := range strings.SplitSeq(alt, "|") {
				m, e := has(p)
				ok, err = ok || m, cmpErr(err, e)
			}
		}
		if err != nil {
			return false, err
		}
		if ok {
			return true, nil
		}
	}
	return false, nil
}

func cmpErr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}
