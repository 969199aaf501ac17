package epoll

import "github.com/ringloop/ringloop/internal/driver"

// Poll keeps reporting readiness of fd for events until cancelled.
func (d *Driver) Poll(fd int, t driver.Tag, events uint32) {
	if st := d.arm(fd, t, fPoll); st != nil {
		st.pollTag = t
		st.pollEvents = events
		st.pollReady = 0
		st.flags |= fPollNew
	}
}

// runPoll reports the events gathered for the fd's armed poll.
func (d *Driver) runPoll(st *fdState) {
	ready := st.pollReady
	st.pollReady = 0
	d.emit(st.pollTag, int32(ready), true, nil)
}
