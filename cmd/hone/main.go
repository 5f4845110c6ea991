// Command hone is the trust layer for performance optimization: it profiles a
// target, keeps a git-native ledger of every attempt, applies patches only inside
// the target's allowlist, and judges them with gates and an interleaved benchmark.
package main

import "os"

func main() { os.Exit(Main(os.Args[1:])) }
