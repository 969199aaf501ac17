package engine

import (
	"log/slog"
	"time"
)

// loopErrorBackoff throttles a loop whose driver keeps failing: the first
// failure waits the least, each failure in a row doubles it up to the most
// (Netty's handleLoopException always sleeps one second). The loop retries
// the same driver: there is no rebuild (see the package doc, Driver
// failures).
var loopErrorBackoff = struct{ least, most time.Duration }{10 * time.Millisecond, time.Second}

// loopError handles a failing Wait: count it, back off, retry. The log says
// so at the 1st, 2nd, 4th, 8th... failure in a row, so a driver that keeps
// failing is reported clearly without flooding the log.
func (l *Loop) loopError(err error) {
	l.waitFails++
	n := l.waitFails
	l.stats.waitErrors.Add(1)
	if n&(n-1) == 0 {
		msg := "ringloop: driver wait failed; retrying after a back-off"
		if n > 1 {
			msg = "ringloop: driver keeps failing; retrying after a back-off"
		}
		l.cfg.logger.Error(msg, slog.String("loop", l.String()), slog.Int("failures in a row", n), slog.Any("err", err))
	}
	d := loopErrorBackoff.most
	if n < 32 {
		d = min(d, loopErrorBackoff.least<<(n-1))
	}
	time.Sleep(d)
}
