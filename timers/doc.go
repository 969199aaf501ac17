// Package timers is the timer structure behind an event loop's Schedule*,
// its per-connection deadlines and the loop's wait timeout.
//
// (Full documentation and measurements follow.)
package timers
