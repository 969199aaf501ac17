//go:build linux && cgo && !ringloop_nouring

// The registered buffer rings: their registration, where rl_run hands
// returned receive buffers back (rl_buf_ring_return), and the datagram
// ring's returns (rl_buf_ring_give).

#include "shim.h"

#include <string.h>

int rl_register_buf_ring(struct rl_ring *r, uint64_t ring_addr, unsigned entries, unsigned bgid)
{
	struct io_uring_buf_reg reg;
	int ret;

	memset(&reg, 0, sizeof(reg));
	reg.ring_addr = ring_addr;
	reg.ring_entries = entries;
	reg.bgid = (uint16_t)bgid;
	do
		ret = io_uring_register_buf_ring(&r->ring, &reg, 0);
	while (ret == -EINTR);
	return ret;
}

int rl_unregister_buf_ring(struct rl_ring *r, unsigned bgid)
{
	int ret;

	do
		ret = io_uring_unregister_buf_ring(&r->ring, (int)bgid);
	while (ret == -EINTR);
	return ret;
}

void rl_set_buf_ring(struct rl_ring *r, uint64_t br, uint64_t base, uint32_t size, uint32_t entries)
{
	r->br = (struct io_uring_buf_ring *)(uintptr_t)br;
	r->buf_base = base;
	r->buf_size = size;
	r->br_mask = entries ? (uint32_t)io_uring_buf_ring_mask(entries) : 0;
}

void rl_buf_ring_init(uint64_t br)
{
	io_uring_buf_ring_init((struct io_uring_buf_ring *)(uintptr_t)br);
}

// rl_buf_ring_give adds buffers rets to buffer ring br, whose buffer id
// first+i lives at base + i*size, and publishes them.
void rl_buf_ring_give(uint64_t br, uint64_t base, uint32_t size, uint32_t entries, uint16_t first,
		      const uint16_t *rets, int nret)
{
	struct io_uring_buf_ring *ring = (struct io_uring_buf_ring *)(uintptr_t)br;
	int mask = io_uring_buf_ring_mask(entries);
	int i;

	if (nret <= 0 || !ring)
		return;
	for (i = 0; i < nret; i++)
		io_uring_buf_ring_add(ring, (void *)(uintptr_t)(base + (uint64_t)(uint16_t)(rets[i] - first) * size),
				      size, rets[i], mask, i);
	io_uring_buf_ring_advance(ring, nret);
}

void rl_buf_ring_return(struct rl_ring *r, const uint16_t *rets, int nret)
{
	int i;

	if (nret <= 0 || !r->br)
		return;
	for (i = 0; i < nret; i++)
		io_uring_buf_ring_add(r->br, (void *)(uintptr_t)(r->buf_base + (uint64_t)rets[i] * r->buf_size),
				      r->buf_size, rets[i], (int)r->br_mask, i);
	io_uring_buf_ring_advance(r->br, nret);
}
