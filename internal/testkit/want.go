package testkit

import (
	"reflect"
	"testing"
)

// Want fails the test, going on, when got is not deeply equal to want,
// naming what was compared and printing both in Go syntax.
func Want[T any](t testing.TB, what string, got, want T) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s = %#v, want %#v", what, got, want)
	}
}
