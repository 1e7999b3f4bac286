/* SPDX-License-Identifier: MIT */
/*
 * The interactive screen. It draws the same lines as `vyre-top -b` (so the
 * two never disagree), with the title and the client header in reverse
 * video, a key line at the bottom, and the help over everything when asked.
 */
#include <curses.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "top.h"

static const char *const help_lines[] = {
    "vyre-top keys",
    "",
    "  h  show or hide this help",
    "  s  sort clients: items/s, items, queue, errors, pid",
    "  p  pause or resume refreshing",
    "  q  quit",
    "",
    "Counters start when vyre-top attaches. A percentile",
    "is the top of the log2 bucket that holds it.",
    "",
    "press h to close",
};

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void draw_help(void)
{
	int n = (int)(sizeof(help_lines) / sizeof(help_lines[0]));
	int w = 62, h = n + 2;
	if (w > COLS)
		w = COLS;
	if (h > LINES)
		h = LINES;
	int y = (LINES - h) / 2, x = (COLS - w) / 2;
	for (int r = 0; r < h; r++)
		mvhline(y + r, x, ' ', w);
	if (w >= 2 && h >= 2) {
		mvhline(y, x, '-', w);
		mvhline(y + h - 1, x, '-', w);
	}
	for (int i = 0; i < n && i + 1 < h - 1; i++)
		mvaddnstr(y + 1 + i, x + 2, help_lines[i], w - 4);
}

static void draw(const struct top_state *st, int have_view, int paused, int help, double delay)
{
	erase();
	if (have_view) {
		int row = 0;
		char *text = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&text, &len);
		if (f) {
			top_print_text(f, &st->view);
			fclose(f);
		}
		char *end = text ? text + len : NULL;
		for (char *line = text, *next; line && line < end && row < LINES - 1; line = next) {
			next = strchr(line, '\n');
			if (next)
				*next++ = '\0';
			else
				next = line + strlen(line);
			int strong = row == 0 || strncmp(line, "  CLIENT", 8) == 0 ||
				     strncmp(line, "     GPU", 8) == 0;
			if (strong)
				attron(A_REVERSE);
			mvaddnstr(row, 0, line, COLS);
			if (strong) {
				for (int x = (int)strlen(line); x < COLS; x++)
					mvaddch(row, x, ' ');
				attroff(A_REVERSE);
			}
			row++;
		}
		free(text);
	} else {
		mvaddnstr(0, 0, "vyre-top: waiting for the first refresh...", COLS);
	}
	char keys[128];
	snprintf(keys, sizeof(keys), "h help  s sort (%s)  p %s  q quit   refresh %.2gs%s",
		 top_sort_name(st->view.sort), paused ? "resume" : "pause", delay,
		 paused ? "   PAUSED" : "");
	attron(A_BOLD);
	mvaddnstr(LINES - 1, 0, keys, COLS);
	attroff(A_BOLD);
	if (help)
		draw_help();
	refresh();
}

int top_ui_run(struct top_state *st, const struct top_options *o)
{
	if (!initscr()) {
		fprintf(stderr, "vyre-top: cannot start the terminal (TERM=%s)\n",
			getenv("TERM") ? getenv("TERM") : "");
		return 1;
	}
	cbreak();
	noecho();
	keypad(stdscr, TRUE);
	curs_set(0);
	enum top_sort sort = o->sort;
	int paused = 0, help = 0, have_view = 0, status = 0;
	char why[160] = "";
	long refreshes = 0;
	uint64_t period = (uint64_t)(o->delay_s * 1e9);
	uint64_t next = now_ns() + period;
	st->view.sort = sort;
	draw(st, have_view, paused, help, o->delay_s);
	for (;;) {
		uint64_t t = now_ns();
		if (t >= next) {
			next = t + period;
			if (!paused) {
				int err = top_state_refresh(st, sort);
				if (err) {
					snprintf(why, sizeof(why),
						 "reading the BPF maps failed: %s", strerror(-err));
					status = 1;
					break;
				}
				if (kill(o->pid, 0) != 0 && errno == ESRCH) {
					snprintf(why, sizeof(why), "pid %d exited", (int)o->pid);
					status = 2;
					break;
				}
				have_view = 1;
				refreshes++;
				draw(st, have_view, paused, help, o->delay_s);
				if (o->iterations > 0 && refreshes >= o->iterations)
					break;
			}
			continue;
		}
		uint64_t wait_ms = (next - t + 999999u) / 1000000u;
		timeout(wait_ms > 1000 ? 1000 : (int)wait_ms);
		int ch = getch();
		if (ch == ERR)
			continue;
		if (ch == 'q' || ch == 'Q')
			break;
		switch (ch) {
		case 'h':
		case 'H':
		case '?':
			help = !help;
			break;
		case 's':
		case 'S':
			sort = (enum top_sort)((sort + 1) % TOP_SORT_COUNT);
			if (have_view)
				top_state_resort(st, sort);
			st->view.sort = sort;
			break;
		case 'p':
		case 'P':
		case ' ':
			paused = !paused;
			break;
		case KEY_RESIZE:
			clear();
			break;
		default:
			continue;
		}
		draw(st, have_view, paused, help, o->delay_s);
	}
	endwin();
	if (why[0])
		fprintf(stderr, "vyre-top: %s\n", why);
	return status;
}
