// Package doccheck holds a test that every package of the module (as go
// list ./... finds them, commands and examples included) reads as user
// documentation under go doc: a package comment, and a comment on every
// exported identifier, in the files of every platform.
package doccheck
