// Package hone holds the module's go.mod and go.sum, for code that must
// know which dependencies it was built with even where Go's record of the
// build has none (a test binary's lists no modules).
package hone

import _ "embed"

// GoMod and GoSum are the module's go.mod and go.sum.
var (
	//go:embed go.mod
	GoMod []byte
	//go:embed go.sum
	GoSum []byte
)
