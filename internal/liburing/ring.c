//go:build linux && cgo && !ringloop_nouring

// The ring's life: setup, enabling, the opcode probe, teardown.

#include "shim.h"

#include <stdlib.h>

struct rl_ring *rl_setup(unsigned entries, unsigned cq_entries, unsigned flags, int *err)
{
	struct rl_ring *r = calloc(1, sizeof(*r));
	unsigned i;
	int ret;

	if (!r) {
		*err = ENOMEM;
		return NULL;
	}
	r->params.flags = flags;
	if (cq_entries) {
		r->params.flags |= IORING_SETUP_CQSIZE;
		r->params.cq_entries = cq_entries;
	}
	ret = io_uring_queue_init_params(entries, &r->ring, &r->params);
	if (ret < 0) {
		*err = -ret;
		free(r);
		return NULL;
	}
	// Map SQ slots to SQEs one to one, as liburing does, so that publishing
	// the tail is all a submission needs.
	for (i = 0; i < r->ring.sq.ring_entries; i++)
		r->ring.sq.array[i] = i;
	r->ext_arg = !!(r->ring.features & IORING_FEAT_EXT_ARG);
	r->timeout_ud = LIBURING_UDATA_TIMEOUT;
	*err = 0;
	return r;
}

void rl_close(struct rl_ring *r)
{
	io_uring_queue_exit(&r->ring);
	free(r);
}

// Older kernels (5.10 among them) quiesce the ring for most registrations
// (enabling it, registering a buffer ring) and give up with -EINTR when a
// signal arrives meanwhile, without registering anything. Go's runtime
// signals threads at any time (SIGURG preemption), so these calls retry.

int rl_enable(struct rl_ring *r)
{
	int ret;

	do
		ret = io_uring_enable_rings(&r->ring);
	while (ret == -EINTR);
	return ret;
}

int rl_probe(struct rl_ring *r, uint8_t *out, int n)
{
	struct io_uring_probe *p = io_uring_get_probe_ring(&r->ring);
	int i;

	if (!p)
		return -EINVAL;
	for (i = 0; i < n; i++)
		out[i] = io_uring_opcode_supported(p, i) ? 1 : 0;
	io_uring_free_probe(p);
	return 0;
}

