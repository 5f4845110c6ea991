// Package profile profiles a target at its pin and keeps the result in the
// ledger: `perf record` output converted to pprof (or a pprof file the target
// writes itself), the hotspots ranked from it with their hottest source lines,
// and `perf stat` counters. Nothing here prints; cmd/hone and the MCP server
// render the same Entry.
package profile
