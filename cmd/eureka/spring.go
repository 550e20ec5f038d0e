package main

import (
	"flag"
	"fmt"
	"regexp"

	"github.com/eurekagate/eurekagate/internal/springeureka"
)

// springSettings are a Spring configuration's settings (see
// internal/springeureka), set on the flags they name.
type springSettings struct{ *springeureka.Settings }

// apply sets the flags of the properties not given as arguments (those
// go over our variables, see args), recording where each value came
// from.
func (s *springSettings) apply(fs *flag.FlagSet, src map[string]string) error {
	if s == nil {
		return nil
	}
	for _, a := range s.Assign {
		if a.Arg {
			continue
		}
		if err := fs.Lookup(a.Setting).Value.Set(a.Value); err != nil {
			return fmt.Errorf("%s: %v", a.From, err)
		}
		src[a.Setting] = a.From
	}
	return nil
}

// args are the assignments of --name=value arguments.
func (s *springSettings) args() []springeureka.Assignment {
	if s == nil {
		return nil
	}
	var out []springeureka.Assignment
	for _, a := range s.Assign {
		if a.Arg {
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
	for _, a := range s.Assign {
		if regexp.MustCompile(`(^|[^a-z-])-` + regexp.QuoteMeta(a.Setting) + `([^a-z-]|$)`).MatchString(err.Error()) {
			return fmt.Errorf("%s: %w", a.From, err)
		}
	}
	return err
}
