/* SPDX-License-Identifier: MIT */
/* Two samples in turn: each refresh compares the newest with the one before. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "top.h"

int top_state_init(struct top_state *st, struct top_session *s, pid_t pid)
{
	memset(st, 0, sizeof(*st));
	st->session = s;
	st->view.pid = pid;
	st->view.exe = top_session_exe(s);
	st->view.probes = top_session_probes(s, &st->view.probes_total);
	int err = top_session_sample(s, &st->sample[0]);
	st->view.workers = st->sample[0].workers;
	st->view.n_workers = st->sample[0].n_workers;
	return err;
}

static int rebuild(struct top_state *st, enum top_sort sort)
{
	const struct top_sample *cur = &st->sample[st->cur];
	const struct top_sample *prev = &st->sample[st->cur ^ 1];
	if (cur->n_clients > st->cap_rows) {
		struct top_client_row *grown = realloc(st->rows, cur->n_clients * sizeof(*grown));
		if (!grown)
			return -ENOMEM;
		st->rows = grown;
		st->cap_rows = cur->n_clients;
	}
	top_view_build(&st->view, prev, cur, st->rows, sort);
	st->view.workers = cur->workers;
	st->view.n_workers = cur->n_workers;
	return 0;
}

int top_state_refresh(struct top_state *st, enum top_sort sort)
{
	int next = st->cur ^ 1;
	int err = top_session_sample(st->session, &st->sample[next]);
	if (err)
		return err;
	st->cur = next;
	return rebuild(st, sort);
}

void top_state_resort(struct top_state *st, enum top_sort sort)
{
	rebuild(st, sort);
}

void top_state_free(struct top_state *st)
{
	top_sample_free(&st->sample[0]);
	top_sample_free(&st->sample[1]);
	free(st->rows);
	st->rows = NULL;
}
