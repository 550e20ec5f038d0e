package testkit

import (
	"os"
	"testing"
)

// Golden compares got with the file at path, or writes got there when
// update is set (a package's -update flag).
func Golden(t testing.TB, path, got string, update bool) {
	t.Helper()
	if update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Errorf("%s differs (go test -update rewrites it):\n--- got\n%s--- want\n%s", path, got, want)
	}
}
