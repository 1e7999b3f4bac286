/* SPDX-License-Identifier: MIT */
/*
 * Op modules on a GPU (cuda_modules.h). The dispatch function is written as
 * PTX here rather than compiled, so vyred needs no runtime compiler: it is a
 * branch an op index to a call of that op's device function, whose
 * signature op_module.h fixes (two pointers in, an int back). The driver's
 * linker then resolves those calls against the modules' code, and a module
 * that lacks its symbol fails the link with the linker's own message.
 */
#include "cuda_modules.h"

#include "cuda_abi.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SYMBOL_MAX    127u
#define LINK_LOG_SIZE 8192u

struct text {
	char *s;
	size_t len, cap;
};

static int put(struct text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int put(struct text *t, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(t->s + t->len, t->cap - t->len, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= t->cap - t->len)
		return VYRE_E_NOMEM; /* the size bound below was wrong: never silently cut */
	t->len += (size_t)n;
	return 0;
}

/* A PTX identifier as a C compiler emits one for an extern "C" function. */
static int symbol_ok(const char *s)
{
	size_t n = 0;

	if (!s || !((s[0] >= 'a' && s[0] <= 'z') || (s[0] >= 'A' && s[0] <= 'Z') || s[0] == '_'))
		return 0;
	for (; s[n]; n++)
		if (!((s[n] >= 'a' && s[n] <= 'z') || (s[n] >= 'A' && s[n] <= 'Z') ||
		      (s[n] >= '0' && s[n] <= '9') || s[n] == '_'))
			return 0;
	return n <= SYMBOL_MAX;
}

/* Whether e[i]'s device function was declared by an earlier op (ops of a module may share one). */
static int declared_before(const struct vyre_op_module_entry *e, uint32_t i)
{
	for (uint32_t j = 0; j < i; j++)
		if (strcmp(e[j].device_fn, e[i].device_fn) == 0)
			return 1;
	return 0;
}

int vyre_cuda_modules_dispatch_ptx(const struct vyre_op_module_entry *e, uint32_t n, char **ptx,
				   char *why, uint32_t why_len)
{
	/* fixed text, and per op an extern and a call block of under 512 bytes besides two symbols
	 */
	const size_t per_op = 512u + 2u * SYMBOL_MAX;
	struct text t = {0};
	int err = 0;

	*ptx = NULL;
	for (uint32_t i = 0; i < n; i++)
		if (!symbol_ok(e[i].device_fn)) {
			snprintf(why, why_len, "op %s of module %s: device function %s%.40s%s",
				 e[i].name ? e[i].name : "?", e[i].module ? e[i].module : "?",
				 e[i].device_fn ? "'" : "",
				 e[i].device_fn ? e[i].device_fn : "missing",
				 e[i].device_fn ? "' is not a PTX identifier" : "");
			return VYRE_E_INVAL;
		}
	if (n > VYRE_OP_MODULES_MAX) {
		snprintf(why, why_len, "%u module ops: at most %u", n, VYRE_OP_MODULES_MAX);
		return VYRE_E_INVAL;
	}
	t.cap = 1024u + (size_t)n * per_op;
	t.s = malloc(t.cap);
	if (!t.s) {
		snprintf(why, why_len, "no memory for the dispatch function of %u module ops", n);
		return VYRE_E_NOMEM;
	}
	err = put(&t, ".version 7.0\n.target sm_75\n.address_size 64\n\n");
	for (uint32_t i = 0; !err && i < n; i++)
		if (!declared_before(e, i))
			err = put(
			    &t,
			    ".extern .func (.param .b32 rv) %s(.param .b64 a, .param .b64 r);\n",
			    e[i].device_fn);
	if (!err)
		err = put(&t, "\n.visible .func (.param .b32 rv) vyre_module_dispatch(.param .b32 "
			      "index, .param .b64 args, .param .b64 result)\n{\n"
			      "\t.reg .pred %%p;\n\t.reg .b32 %%i, %%v;\n\t.reg .b64 %%a, %%r;\n"
			      "\tld.param.u32 %%i, [index];\n\tld.param.u64 %%a, [args];\n"
			      "\tld.param.u64 %%r, [result];\n");
	for (uint32_t i = 0; !err && i < n; i++)
		err = put(&t, "\tsetp.eq.u32 %%p, %%i, %u;\n\t@%%p bra $L_%u;\n", i, i);
	if (!err)
		err = put(&t, "\tmov.u32 %%v, %d;\n\tst.param.b32 [rv], %%v;\n\tret;\n",
			  (int)VYRE_E_INVAL);
	for (uint32_t i = 0; !err && i < n; i++)
		err = put(&t,
			  "$L_%u:\n\t{\n\t.param .b64 a0;\n\t.param .b64 a1;\n\t.param .b32 v0;\n"
			  "\tst.param.b64 [a0], %%a;\n\tst.param.b64 [a1], %%r;\n"
			  "\tcall (v0), %s, (a0, a1);\n\tld.param.b32 %%v, [v0];\n\t}\n"
			  "\tst.param.b32 [rv], %%v;\n\tret;\n",
			  i, e[i].device_fn);
	if (!err)
		err = put(&t, "}\n");
	if (err) {
		free(t.s);
		snprintf(why, why_len, "the dispatch function of %u module ops outgrew its bound",
			 n);
		return err;
	}
	*ptx = t.s;
	return 0;
}

/* The linker's error log after @call failed, with what was being linked. */
static void link_failed(const struct vyre_cuda_driver *d, CUresult r, const char *call,
			const char *what, const char *log, char *why, uint32_t why_len)
{
	char err[160];

	vyre_cuda_error(d, err, sizeof(err), call, r);
	snprintf(why, why_len, "%s: %s%s%.*s", what, err, log[0] ? "; linker log: " : "",
		 (int)LINK_LOG_SIZE, log);
}

/* A cubin (ELF) or a fatbin, told by its magic, for cuLinkAddData. */
static CUjitInputType binary_type(const uint8_t *b, uint64_t bytes)
{
	static const uint8_t elf[4] = {0x7f, 'E', 'L', 'F'};

	return bytes >= 4 && memcmp(b, elf, 4) == 0 ? CU_JIT_INPUT_CUBIN : CU_JIT_INPUT_FATBINARY;
}

/* Adds module code (cubin if it has one, else its PTX, NUL-terminated) of op @m. */
static int add_module(const struct vyre_cuda_driver *d, CUlinkState ls,
		      const struct vyre_op_module_entry *m, const char *log, char *why,
		      uint32_t why_len)
{
	char what[160];
	CUresult r;

	snprintf(what, sizeof(what), "op module %s (op %s): its device code", m->module, m->name);
	if (m->cubin && m->cubin_bytes) {
		r = d->cuLinkAddData(ls, binary_type(m->cubin, m->cubin_bytes), (void *)m->cubin,
				     (size_t)m->cubin_bytes, m->module, 0, NULL, NULL);
	} else {
		if (!m->ptx || !m->ptx_bytes || m->ptx_bytes >= SIZE_MAX) {
			snprintf(why, why_len, "%s is missing: a module needs PTX or a cubin",
				 what);
			return VYRE_E_INVAL;
		}
		char *text = malloc((size_t)m->ptx_bytes + 1);

		if (!text) {
			snprintf(why, why_len, "%s: no memory for its PTX", what);
			return VYRE_E_NOMEM;
		}
		memcpy(text, m->ptx, (size_t)m->ptx_bytes);
		text[m->ptx_bytes] = '\0';
		r = d->cuLinkAddData(ls, CU_JIT_INPUT_PTX, text, strlen(text) + 1, m->module, 0,
				     NULL, NULL);
		free(text);
	}
	if (r != CUDA_SUCCESS) {
		link_failed(d, r, "cuLinkAddData", what, log, why, why_len);
		return r == CUDA_ERROR_OUT_OF_MEMORY ? VYRE_E_NOMEM : VYRE_E_INVAL;
	}
	return 0;
}

/* Whether an earlier op of @e shares e[i]'s module code (added once). */
static int code_added_before(const struct vyre_op_module_entry *e, uint32_t i)
{
	for (uint32_t j = 0; j < i; j++)
		if (e[j].ptx == e[i].ptx && e[j].cubin == e[i].cubin)
			return 1;
	return 0;
}

static int link_all(const struct vyre_cuda_driver *d, CUlinkState ls,
		    const struct vyre_op_module_entry *e, uint32_t n, const char *dispatch,
		    char *log, CUmodule *mod, char *why, uint32_t why_len)
{
	void *image = NULL;
	size_t image_bytes = 0;
	CUresult r;
	int err;

	r = d->cuLinkAddData(ls, CU_JIT_INPUT_FATBINARY, (void *)vyre_megakernel_rdc_fatbin,
			     (size_t)vyre_megakernel_rdc_fatbin_bytes, "megakernel", 0, NULL, NULL);
	if (r != CUDA_SUCCESS) {
		link_failed(d, r, "cuLinkAddData", "the relocatable megakernel", log, why, why_len);
		return VYRE_E_DEVICE;
	}
	r = d->cuLinkAddData(ls, CU_JIT_INPUT_PTX, (void *)dispatch, strlen(dispatch) + 1,
			     "vyre_module_dispatch", 0, NULL, NULL);
	if (r != CUDA_SUCCESS) {
		link_failed(d, r, "cuLinkAddData", "the module dispatch function", log, why,
			    why_len);
		return VYRE_E_DEVICE;
	}
	for (uint32_t i = 0; i < n; i++)
		if (!code_added_before(e, i)) {
			err = add_module(d, ls, &e[i], log, why, why_len);
			if (err)
				return err;
		}
	r = d->cuLinkComplete(ls, &image, &image_bytes);
	if (r != CUDA_SUCCESS) {
		char what[96];

		snprintf(what, sizeof(what), "linking %u module op%s into the megakernel", n,
			 n == 1 ? "" : "s");
		link_failed(d, r, "cuLinkComplete", what, log, why, why_len);
		return r == CUDA_ERROR_OUT_OF_MEMORY ? VYRE_E_NOMEM : VYRE_E_INVAL;
	}
	r = d->cuModuleLoadData(mod, image);
	if (r != CUDA_SUCCESS) {
		*mod = NULL;
		vyre_cuda_error(d, why, why_len, "cuModuleLoadData(megakernel with modules)", r);
		return r == CUDA_ERROR_OUT_OF_MEMORY ? VYRE_E_NOMEM : VYRE_E_DEVICE;
	}
	return 0;
}

static int link_entries(const struct vyre_cuda_driver *d, const struct vyre_op_module_entry *e,
			uint32_t n, CUmodule *mod, char *why, uint32_t why_len)
{
	char *dispatch = NULL, *log = calloc(1, LINK_LOG_SIZE + 1);
	/*
	 * The megakernel's blocks of VYRE_MK_THREADS threads leave 64 registers a
	 * thread, and the linker refuses a callee that uses more: module PTX is
	 * compiled to fit (a cubin must have been built so, -maxrregcount=64).
	 */
	CUjit_option opt[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
			      CU_JIT_MAX_REGISTERS};
	void *val[] = {log, (void *)(uintptr_t)LINK_LOG_SIZE,
		       (void *)(uintptr_t)(65536u / VYRE_MK_THREADS)};
	CUlinkState ls = NULL;
	CUresult r;
	int err;

	*mod = NULL;
	if (!log) {
		snprintf(why, why_len, "no memory for the linker's log");
		return VYRE_E_NOMEM;
	}
	err = vyre_cuda_modules_dispatch_ptx(e, n, &dispatch, why, why_len);
	if (err) {
		free(log);
		return err;
	}
	r = d->cuLinkCreate(3, opt, val, &ls);
	if (r != CUDA_SUCCESS) {
		vyre_cuda_error(d, why, why_len, "cuLinkCreate", r);
		err = r == CUDA_ERROR_OUT_OF_MEMORY ? VYRE_E_NOMEM : VYRE_E_DEVICE;
	} else {
		err = link_all(d, ls, e, n, dispatch, log, mod, why, why_len);
		d->cuLinkDestroy(ls);
	}
	free(dispatch);
	free(log);
	return err;
}

int vyre_cuda_modules_load(const struct vyre_cuda_driver *d, CUmodule *mod, char *why,
			   uint32_t why_len)
{
	uint32_t n = 0;
	const struct vyre_op_module_entry *e = vyre_op_modules_all(&n);

	return link_entries(d, e, n, mod, why, why_len);
}

int vyre_cuda_modules_try(const struct vyre_cuda_driver *d, const struct vyre_op_module_entry *e,
			  uint32_t n, char *why, uint32_t why_len)
{
	CUmodule mod = NULL;
	const int err = link_entries(d, e, n, &mod, why, why_len);

	if (mod)
		d->cuModuleUnload(mod);
	return err;
}
