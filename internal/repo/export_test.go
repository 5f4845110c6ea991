package repo

// What the external tests (package repo_test, which may import testgit,
// itself built on this package) check of the unexported writers.
var (
	StoredZlib = storedZlib
	FileID     = fileID
)
