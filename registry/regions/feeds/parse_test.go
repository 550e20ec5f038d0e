package feeds_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/eurekagate/eurekagate/registry/regions/feeds"
)

func TestParseRemotes(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []feeds.Remote
	}{
		{"", nil},
		{" , ", nil},
		{"eu-west-1=http://eu-1:8761/eureka/", []feeds.Remote{{"eu-west-1", []string{"http://eu-1:8761/eureka/"}}}},
		{
			"EU-West-1=http://eu-1:8761/eureka/, ap-south-1=https://u:p@ap:8761/eureka/ ,eu-west-1=http://eu-2:8761/eureka/",
			[]feeds.Remote{
				{"eu-west-1", []string{"http://eu-1:8761/eureka/", "http://eu-2:8761/eureka/"}},
				{"ap-south-1", []string{"https://u:p@ap:8761/eureka/"}},
			},
		},
		// Java's separator, and a URL with a query.
		{"eu-west-1;http://eu-1:8761/eureka/?a=b", []feeds.Remote{{"eu-west-1", []string{"http://eu-1:8761/eureka/?a=b"}}}},
	} {
		got, err := feeds.ParseRemotes(c.in)
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("ParseRemotes(%q) = %v, %v; want %v", c.in, got, err, c.want)
		}
	}
}

func TestParseRemotesRefuses(t *testing.T) {
	for in, want := range map[string]string{
		"http://eu-1:8761/eureka/":            `"http://eu-1:8761/eureka/" names no region`,
		"http://eu-1:8761/eureka/?a=b":        "names no region",
		"=http://eu-1:8761/eureka/":           "names no region",
		"eu-west-1=":                          `"eu-west-1=" has no URL`,
		"eu-west-1":                           "names no region",
		"eu-west-1=eu-1:8761":                 `region eu-west-1: "eu-1:8761" is not an http or https URL with a host`,
		"eu-west-1=ftp://eu-1/eureka/":        "not an http or https URL",
		"eu-west-1=http://eu 1/eureka/":       "is not a URL",
		"ok=http://a/eureka/,bad=http:///eu/": `region bad: "http:///eu/"`,
	} {
		if _, err := feeds.ParseRemotes(in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseRemotes(%q): %v, want an error with %q", in, err, want)
		}
	}
}
