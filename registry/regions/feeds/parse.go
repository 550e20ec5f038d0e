package feeds

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
)

// ParseRemotes reads remote regions written as a flag or a property:
// comma-separated name=URL entries, such as
//
//	eu-west-1=http://eu-1:8761/eureka/,eu-west-1=http://eu-2:8761/eureka/,ap-south-1=http://ap:8761/eureka/
//
// A name that comes again adds a URL to its region; the regions keep the
// order in which their names first come. Java's separator, name;URL (as
// in eureka.server.remoteRegionUrlsWithName), is read too. Names are
// lower-cased; blank entries are skipped. An entry without a name or a
// URL, or whose URL is not an http or https URL with a host, is an error
// that quotes it.
func ParseRemotes(s string) ([]Remote, error) {
	var out []Remote
	index := map[string]int{}
	for entry := range strings.SplitSeq(s, ",") {
		entry = strings.TrimSpace(entry)
		if entry == "" {
			continue
		}
		i := strings.IndexAny(entry, "=;")
		if i < 0 || strings.ContainsAny(entry[:i], ":/") { // a URL with no name before it
			i = -1
		}
		if i < 0 {
			return nil, fmt.Errorf("%q names no region; write it as name=URL, such as eu-west-1=http://eureka.eu-west-1:8761/eureka/", entry)
		}
		name, u := strings.ToLower(strings.TrimSpace(entry[:i])), strings.TrimSpace(entry[i+1:])
		switch {
		case name == "":
			return nil, fmt.Errorf("%q names no region; write it as name=URL, such as eu-west-1=%s", entry, u)
		case u == "":
			return nil, fmt.Errorf("%q has no URL; write it as name=URL, such as %s=http://eureka.%s:8761/eureka/", entry, name, name)
		}
		if err := CheckURL(u); err != nil {
			return nil, fmt.Errorf("region %s: %w", name, err)
		}
		n, ok := index[name]
		if !ok {
			n = len(out)
			index[name] = n
			out = append(out, Remote{Name: name})
		}
		out[n].URLs = append(out[n].URLs, u)
	}
	return out, nil
}

// CheckURL refuses a service URL that a client could not use, with the
// fix.
func CheckURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return fmt.Errorf("%q is not a URL (%v); write it as http://host:8761/eureka/", raw, err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("%q is not an http or https URL with a host; write it as http://host:8761/eureka/", raw)
	}
	return nil
}
