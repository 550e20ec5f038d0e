package registry

import (
	"reflect"
	"testing"
)

func want[T any](t *testing.T, what string, got, wantV T) {
	t.Helper()
	if !reflect.DeepEqual(got, wantV) {
		t.Errorf("%s = %#v, want %#v", what, got, wantV)
	}
}
