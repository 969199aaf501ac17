//go:build linux && cgo && !ringloop_nouring

// One loop iteration in one cgo call: hand back receive buffers, copy the
// Go side's SQEs into the ring, submit, wait, copy the completions out.

#include "shim.h"

#include <string.h>
#include <time.h>

// rl_flush_sq publishes the prepared SQEs to the kernel and returns how many
// it has not consumed yet.
static unsigned rl_flush_sq(struct io_uring *ring)
{
	struct io_uring_sq *sq = &ring->sq;
	unsigned tail = sq->sqe_tail;

	if (sq->sqe_head != tail) {
		sq->sqe_head = tail;
		io_uring_smp_store_release(sq->ktail, tail);
	}
	return tail - IO_URING_READ_ONCE(*sq->khead);
}

// rl_enter submits what is pending and, with wait_nr, waits for that many
// completions (up to *ts when given, through EXT_ARG).
static int rl_enter(struct rl_ring *r, unsigned wait_nr, struct __kernel_timespec *ts)
{
	struct io_uring *ring = &r->ring;
	unsigned to_submit = rl_flush_sq(ring);
	unsigned flags = IORING_ENTER_GETEVENTS;
	struct io_uring_getevents_arg arg;
	void *argp = NULL;
	size_t sz = _NSIG / 8;

	if (ts) {
		memset(&arg, 0, sizeof(arg));
		arg.sigmask_sz = _NSIG / 8;
		arg.ts = (uint64_t)(uintptr_t)ts;
		flags |= IORING_ENTER_EXT_ARG;
		argp = &arg;
		sz = sizeof(arg);
	}
	r->stats.enters++;
	return io_uring_enter2(ring->ring_fd, to_submit, wait_nr, flags, (sigset_t *)argp, sz);
}

static int rl_submit(struct rl_ring *r)
{
	int ret;

	do {
		ret = rl_enter(r, 0, NULL);
		if (ret == -EINTR)
			r->stats.eintr++;
	} while (ret == -EINTR);
	return ret;
}

// rl_get_sqe returns a free SQE, submitting what is queued when the SQ is
// full. NULL means the kernel refuses to take more right now (-EBUSY,
// -EAGAIN); *err is set for any other failure.
static struct io_uring_sqe *rl_get_sqe(struct rl_ring *r, int *err)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&r->ring);
	int ret;

	if (sqe)
		return sqe;
	r->stats.sq_full++;
	ret = rl_submit(r);
	if (ret < 0 && ret != -EBUSY && ret != -EAGAIN) {
		*err = ret;
		return NULL;
	}
	return io_uring_get_sqe(&r->ring);
}

static int64_t rl_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static inline int rl_silent(struct rl_ring *r, const struct io_uring_cqe *c)
{
	if ((c->user_data & RL_UD_SILENT_MASK) != RL_UD_SILENT)
		return 0;
	r->stats.silent++;
	if (c->res < 0 && c->res != -ENOENT && c->res != -EALREADY)
		r->stats.silent_err++;
	return 1;
}

enum { RL_TIMED_OUT = 1, RL_TIMEOUT_FIRED = 2 };

// rl_cq_pending drops silent completions and those of our timeout SQEs at
// the head of the CQ (noting in *tflags whether a timeout expired or was
// satisfied early by a silent completion) and reports whether a completion
// that matters is ready, or waits in the overflow list.
static int rl_cq_pending(struct rl_ring *r, int *tflags)
{
	struct io_uring *ring = &r->ring;
	unsigned head = *ring->cq.khead;
	unsigned tail = io_uring_smp_load_acquire(ring->cq.ktail);
	unsigned start = head;

	while (head != tail) {
		struct io_uring_cqe *c = &ring->cq.cqes[head & ring->cq.ring_mask];

		if (c->user_data == r->timeout_ud)
			*tflags |= c->res == -ETIME ? RL_TIMED_OUT : RL_TIMEOUT_FIRED;
		else if (!rl_silent(r, c))
			break;
		head++;
	}
	if (head != start)
		io_uring_smp_store_release(ring->cq.khead, head);
	return head != tail || io_uring_cq_has_overflow(ring);
}

int rl_run(struct rl_ring *r, struct io_uring_sqe *sqes, int nsqes, const uint16_t *rets, int nret,
	   int64_t timeout_ns, struct rl_cqe *out, int out_cap)
{
	struct io_uring *ring = &r->ring;
	struct io_uring_sqe *sqe;
	int64_t deadline = 0;
	int i, ret, err = 0, n = 0, waiting, need_timeout_sqe = 0, tflags = 0;

	r->ops_left = 0;

	// 1. Hand returned receive buffers back to the buffer ring.
	rl_buf_ring_return(r, rets, nret);

	// 2. Copy the SQEs into the ring as they are (the Go side wrote them
	// whole); a full SQ is submitted and reused.
	for (i = 0; i < nsqes; i++) {
		sqe = rl_get_sqe(r, &err);
		if (!sqe) {
			// Keep what could not go in for the next call.
			memmove(sqes, sqes + i, (size_t)(nsqes - i) * sizeof(*sqes));
			r->ops_left = nsqes - i;
			if (err)
				return err;
			break;
		}
		*sqe = sqes[i];
		r->stats.submitted++;
	}

	// 3. Submit, and wait when nothing is ready yet. Without EXT_ARG the
	// timeout is a timeout SQE that also completes when any other CQE is
	// posted; if only silent ones did that, it is armed again.
	waiting = timeout_ns != 0 && r->ops_left == 0 && !rl_cq_pending(r, &tflags);
	if (waiting && timeout_ns > 0) {
		deadline = rl_now_ns() + timeout_ns;
		need_timeout_sqe = !r->ext_arg;
	}
	for (;;) {
		struct __kernel_timespec ts, *tsp = NULL;
		unsigned wait_nr = 0;

		if (waiting) {
			wait_nr = 1;
			if (timeout_ns > 0) {
				int64_t left = deadline - rl_now_ns();

				if (left <= 0) {
					wait_nr = 0;
					waiting = 0;
				} else if (r->ext_arg) {
					ts.tv_sec = left / 1000000000LL;
					ts.tv_nsec = left % 1000000000LL;
					tsp = &ts;
				} else if (need_timeout_sqe) {
					sqe = rl_get_sqe(r, &err);
					if (!sqe) {
						if (err)
							return err;
						wait_nr = 0;
						waiting = 0;
					} else {
						r->ts.tv_sec = left / 1000000000LL;
						r->ts.tv_nsec = left % 1000000000LL;
						io_uring_prep_timeout(sqe, &r->ts, 1, 0);
						io_uring_sqe_set_data64(sqe, r->timeout_ud);
						need_timeout_sqe = 0;
					}
				}
			}
		}
		if (!wait_nr && ring->sq.sqe_tail == IO_URING_READ_ONCE(*ring->sq.khead) &&
		    !(IO_URING_READ_ONCE(*ring->sq.kflags) & (IORING_SQ_CQ_OVERFLOW | IORING_SQ_TASKRUN)))
			break;
		ret = rl_enter(r, wait_nr, tsp);
		if (ret == -EINTR) {
			r->stats.eintr++;
			continue;
		}
		if (ret == -ETIME || ret == -EBUSY || ret == -EAGAIN)
			break;
		if (ret < 0)
			return ret;
		if (!wait_nr)
			break;
		tflags = 0;
		if (rl_cq_pending(r, &tflags) || (tflags & RL_TIMED_OUT))
			break;
		if (tflags & RL_TIMEOUT_FIRED)
			need_timeout_sqe = 1;
		// Woken by silent completions only, or the kernel stopped
		// submitting early: go round, submitting the rest and waiting on.
	}

	// 4. Copy completions out, flushing the kernel's overflow list when the
	// CQ empties (FEAT_NODROP keeps what did not fit).
	for (;;) {
		unsigned head = *ring->cq.khead;
		unsigned tail = io_uring_smp_load_acquire(ring->cq.ktail);
		unsigned mask = ring->cq.ring_mask;

		while (head != tail && n < out_cap) {
			struct io_uring_cqe *c = &ring->cq.cqes[head & mask];

			head++;
			if (c->user_data == r->timeout_ud || rl_silent(r, c))
				continue;
			out[n].user_data = c->user_data;
			out[n].res = c->res;
			out[n].flags = c->flags;
			n++;
		}
		io_uring_smp_store_release(ring->cq.khead, head);
		if (n >= out_cap || !io_uring_cq_has_overflow(ring))
			break;
		r->stats.overflow++;
		ret = rl_submit(r);
		if (ret < 0 && ret != -EBUSY && ret != -EAGAIN && ret != -ETIME)
			break;
		if (io_uring_cq_ready(ring) == 0)
			break;
	}
	r->stats.completions += (uint64_t)n;
	return n;
}
