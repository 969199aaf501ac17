// Package testsum counts what a test run did, so that `make test` and the
// kernel VMs can say it in one line per stage: N passed, N failed, N
// skipped. It counts leaf tests (a test with subtests counts its subtests,
// not itself, so a test whose subtests all skip is counted as skipped, not
// passed), and it checks each skip against a short allowlist with a reason
// per entry (tests/skips.txt), so that a new t.Skip cannot pass unseen.
//
// It reads the events of `go test -json` (Stream) on the host, and the
// result lines of a test binary's -test.v output (ParseResultLine) in the
// kernel VMs, where there is no go tool to produce JSON. Stage records
// (Record) let the per-stage lines and the total be printed at the end of a
// run made of several go commands.
package testsum
