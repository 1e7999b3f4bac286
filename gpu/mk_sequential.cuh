// SPDX-License-Identifier: MIT
//
// gpu/mk_sequential.cuh - the sequential path on the device: one thread,
// byte loads, exactly gpu/ops.c, for units the host found unaligned or
// partly overlapping (and DFA items on unaligned operands).
//
// gpu/megakernel.cu includes this inside its anonymous namespace, after its
// common helpers (put_result, bump_progress, combine), whose code this uses.

__device__ __forceinline__ uint32_t load32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

__device__ __forceinline__ void store32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

__device__ uint64_t dfa_table_bytes(uint32_t n_states)
{
	if (n_states == 0)
		return 0;
	return 4 * (2 + ((uint64_t)n_states + 31) / 32 + 256 * (uint64_t)n_states);
}

__device__ int dfa_sequential(const uint8_t *table, uint32_t table_bytes, const uint8_t *in,
			      uint32_t in_bytes, uint32_t *count)
{
	if (table_bytes < 8)
		return VYRE_E_INVAL;
	const uint32_t n_states = load32(table), start = load32(table + 4);
	const uint64_t need = dfa_table_bytes(n_states);

	if (need == 0 || need > table_bytes || start >= n_states)
		return VYRE_E_INVAL;
	const uint8_t *accept = table + 8;
	const uint8_t *next = accept + 4 * (((uint64_t)n_states + 31) / 32);
	for (uint64_t i = 0; i < 256 * (uint64_t)n_states; i++)
		if (load32(next + 4 * i) >= n_states)
			return VYRE_E_INVAL;

	uint32_t state = load32(table + 4), hits = 0;
	if (state >= n_states)
		return VYRE_E_INVAL;
	for (uint32_t i = 0; i < in_bytes; i++) {
		state = load32(next + 4 * ((uint64_t)state * 256 + in[i]));
		if (state >= n_states)
			return VYRE_E_INVAL;
		hits += (load32(accept + 4 * (state / 32)) >> (state % 32)) & 1u;
	}
	*count = hits;
	return 0;
}

__device__ void sequential_unit(const vyre_mk_unit &u, uint64_t results, vyre_mk_devstate *ds)
{
	const uint32_t op = u.op & VYRE_MK_OP_MASK;
	const uint8_t *in = reinterpret_cast<const uint8_t *>(u.in);
	uint8_t *out = reinterpret_cast<uint8_t *>(u.out);
	uint32_t acc = 0;

	switch (op) {
	case VYRE_OP_FILL:
		for (uint32_t i = 0; i < u.count; i++)
			store32(out + 4 * (uint64_t)i, u.param);
		return;
	case VYRE_OP_COPY:
		// memmove: forward when the destination is below the source
		if (out <= in) {
			for (uint64_t i = 0; i < 4 * (uint64_t)u.count; i++)
				out[i] = in[i];
		} else {
			for (uint64_t i = 4 * (uint64_t)u.count; i > 0; i--)
				out[i - 1] = in[i - 1];
		}
		return;
	case VYRE_OP_ADD:
	case VYRE_OP_XOR:
	case VYRE_OP_MUL:
		for (uint32_t i = 0; i < u.count; i++)
			store32(out + 4 * (uint64_t)i,
				combine(op, load32(in + 4 * (uint64_t)i), u.param));
		return;
	case VYRE_OP_SUM:
	case VYRE_OP_MAX:
		for (uint32_t i = 0; i < u.count; i++) {
			acc = reduce(op, acc, load32(in + 4 * (uint64_t)i));
			if ((i & 4095u) == 4095u)
				bump_progress(ds);
		}
		break;
	case VYRE_OP_DFA_SCAN:
	case VYRE_OP_DFA_SCAN_COUNTED: {
		// DFA_SCAN_COUNTED: the bytes after the length word (lowering made count >= 4)
		const uint32_t len = op == VYRE_OP_DFA_SCAN ? u.count : load32(in);
		const uint32_t skip = op == VYRE_OP_DFA_SCAN ? 0 : 4;
		if (len > u.count - skip ||
		    dfa_sequential(reinterpret_cast<const uint8_t *>(u.table), u.aux, in + skip,
				   len, &acc) != 0) {
			put_result(results, u.slot, VYRE_E_INVAL, 0);
			return;
		}
		break;
	}
	default:
		return;
	}
	store32(out, acc);
	put_result(results, u.slot, 0, acc);
}
