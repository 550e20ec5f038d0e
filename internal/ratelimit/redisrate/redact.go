package redisrate

import (
	"net/url"
	"strings"
)

// redact takes a Redis URL's password out of an error's text (an error
// of go-redis or net/url may quote the URL it was given); a URL that
// does not parse is not quoted at all.
func redact(msg, raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return strings.ReplaceAll(msg, raw, "(the URL given)")
	}
	msg = strings.ReplaceAll(msg, raw, u.Redacted())
	if p, ok := u.User.Password(); ok && p != "" {
		msg = strings.ReplaceAll(msg, p, "xxxxx")
	}
	return msg
}
