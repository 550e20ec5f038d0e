package eureka

import (
	"encoding/base64"
	"fmt"
	"net/url"
	"strings"
)

// ServiceURL is a Eureka server's service URL (such as
// http://user:pass@eureka-1:8761/eureka/), split into the base that request
// paths are appended to and the basic-auth header its user info asks for.
type ServiceURL struct {
	// Base is scheme://host[:port]/path/, always ending in "/", without
	// user info.
	Base string
	// Authorization is "Basic ..." when the URL carried user info, else "".
	Authorization string
	// Host is the URL's host[:port].
	Host string
}

// ParseServiceURL parses an http or https service URL.
func ParseServiceURL(raw string) (ServiceURL, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return ServiceURL{}, fmt.Errorf("eureka: invalid service URL %q", raw)
	}
	var s ServiceURL
	if u.User != nil {
		pass, _ := u.User.Password()
		s.Authorization = "Basic " + base64.StdEncoding.EncodeToString([]byte(u.User.Username()+":"+pass))
		u.User = nil
	}
	if !strings.HasSuffix(u.Path, "/") {
		u.Path += "/"
	}
	u.RawQuery, u.Fragment = "", ""
	s.Base, s.Host = u.String(), u.Host
	return s, nil
}
