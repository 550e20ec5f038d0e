package caddymodule

// eachHandler calls f with every handler named name in an adapted Caddy
// config decoded as JSON (any object whose "handler" is name), before it
// looks inside that handler.
func eachHandler(doc any, name string, f func(handler map[string]any)) {
	switch v := doc.(type) {
	case map[string]any:
		if v["handler"] == name {
			f(v)
		}
		for _, c := range v {
			eachHandler(c, name, f)
		}
	case []any:
		for _, c := range v {
			eachHandler(c, name, f)
		}
	}
}
