// Package bench measures this project beside its peers (redsync, go-redis with and
// without AutoPipeline, rueidis) and beside the floor, a hand-multiplexed Redlock
// cycle on raw sockets, in one run on the same local masters; its interop tests run
// redsync against quorum. It is a module of its own, so that the peers never enter
// the requirements of a program that imports quorum; scripts/test.sh runs its tests
// and PERFORMANCE.md gives the benchmark commands.
package bench
