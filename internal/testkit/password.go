package testkit

import (
	"testing"

	"golang.org/x/crypto/bcrypt"
)

// PasswordHash returns the bcrypt hash of password, at the lowest cost so
// that tests stay quick, as the servers' basic auth and Caddy's
// basic_auth take it; it fails the test if hashing fails.
func PasswordHash(t testing.TB, password string) string {
	t.Helper()
	h, err := bcrypt.GenerateFromPassword([]byte(password), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	return string(h)
}
