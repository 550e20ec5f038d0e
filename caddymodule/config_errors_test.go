package caddymodule

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig"
)

// caddyfileError is a Caddyfile that adapting must refuse, and what the
// error must say.
type caddyfileError struct {
	name, caddyfile string
	want            []string
}

// withEurekaOptions is a Caddyfile whose eureka global option holds opts,
// lines of its block, beside a site that answers ok.
func withEurekaOptions(opts string) string {
	return "{\n\teureka {\n" + opts + "\t}\n}\nhttp://:1 {\n\trespond ok\n}\n"
}

// expectCaddyfileErrors adapts each Caddyfile and checks that it is
// refused with one plain line (no Go parser's wording) that says what the
// case wants. It returns the error messages by case name.
func expectCaddyfileErrors(t *testing.T, cases []caddyfileError) map[string]string {
	t.Helper()
	msgs := map[string]string{}
	for _, tc := range cases {
		_, _, err := caddyconfig.GetAdapter("caddyfile").Adapt([]byte(tc.caddyfile), nil)
		if err == nil {
			t.Errorf("%s: accepted:\n%s", tc.name, tc.caddyfile)
			continue
		}
		msg := err.Error()
		msgs[tc.name] = msg
		for _, want := range tc.want {
			if !strings.Contains(msg, want) {
				t.Errorf("%s: %q lacks %q", tc.name, msg, want)
			}
		}
		if strings.Contains(msg, "\n") || strings.Contains(msg, "strconv") {
			t.Errorf("%s: not a plain one-line message: %q", tc.name, msg)
		}
	}
	return msgs
}

// expectAppOption adapts, for each of lines (the eureka block's lines of
// an option) the Caddyfile withEurekaOptions makes, and checks the
// option's value in the app (get), nil when absent.
func expectAppOption[T comparable](t *testing.T, option string, get func(*App) *T, lines map[string]*T) {
	t.Helper()
	for line, want := range lines {
		app, _ := adaptApp(t, withEurekaOptions("\t\t"+line+"\n"))
		if app == nil {
			t.Fatalf("%q: no eureka app", line)
		}
		if got := get(app); (got == nil) != (want == nil) || got != nil && *got != *want {
			t.Errorf("%q: %s %s, want %s", line, option, optionValue(got), optionValue(want))
		}
	}
}

// optionValue is an option's value, or "absent".
func optionValue[T any](v *T) string {
	if v == nil {
		return "absent"
	}
	return fmt.Sprint(*v)
}

// appError is an eureka app's JSON config that provisioning must refuse,
// and what the error must say.
type appError struct {
	app  string
	want []string
}

// expectAppErrors validates a config of each eureka app and checks that
// it is refused with one short line (no reflection's wording, no fx
// wiring dump) that says what the case wants.
func expectAppErrors(t *testing.T, cases []appError) {
	t.Helper()
	for _, tc := range cases {
		cfg := &caddy.Config{Admin: &caddy.AdminConfig{Disabled: true}, AppsRaw: caddy.ModuleMap{"eureka": json.RawMessage(tc.app)}}
		err := caddy.Validate(cfg)
		if err == nil {
			t.Errorf("%s: accepted", tc.app)
			continue
		}
		msg := err.Error()
		for _, want := range tc.want {
			if !strings.Contains(msg, want) {
				t.Errorf("%s: %q lacks %q", tc.app, msg, want)
			}
		}
		if strings.Contains(msg, "reflect.") || strings.Contains(msg, "\n") || len(msg) > 300 {
			t.Errorf("%s: not a one-line message: %q", tc.app, msg)
		}
	}
}
