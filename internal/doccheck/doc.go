// Package doccheck holds a test that the exported packages read as user
// documentation under go doc: a package comment, and a comment on every
// exported identifier.
package doccheck
