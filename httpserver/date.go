package httpserver

import (
	"net/http"
	"time"
)

// updateDate re-formats the loop's Date header line when the second has
// changed: once per second per loop, never per request.
func (ls *loopState) updateDate(t time.Time) {
	sec := t.Unix()
	if sec == ls.dateSec && ls.date != nil {
		return
	}
	ls.dateSec = sec
	b := append(ls.date[:0], "Date: "...)
	b = t.UTC().AppendFormat(b, http.TimeFormat)
	ls.date = append(b, "\r\n"...)
}
