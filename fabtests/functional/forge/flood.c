/* SPDX-License-Identifier: BSD-2-Clause */
/* rdmx_forge: the flood of -n datagrams, paced at --rate, and its report. */
#include <time.h>

#include "forge.h"

/* Sleeps until datagram i is due at --rate. */
static void fg_pace(struct fg *fg, uint64_t start_ns, uint64_t i)
{
	uint64_t due = start_ns + i * 1000000000ULL / fg->rate, now = ft_now_ns();

	if (due > now + 50000)
		nanosleep(&(struct timespec) { (time_t) ((due - now) / 1000000000ULL),
					       (long) ((due - now) % 1000000000ULL) }, NULL);
}

int fg_flood(struct fg *fg)
{
	uint8_t buf[FG_DGRAM_MAX + 64];
	uint64_t start = ft_now_ns();

	for (uint64_t i = 0; i < fg->count; i++) {
		if (fg->rate && i % 16 == 0)
			fg_pace(fg, start, i);
		if (fg->auth && i % 16 == 0)
			fg_session_poll(fg);
		if (fg_send(fg, buf, fg_make(fg, i, buf)))
			return -1;
	}
	return 0;
}

/* Prints what fg_flood sent. */
void fg_report(const struct fg *fg)
{
	printf(FG_NAME ": sent=%" PRIu64 " bytes=%" PRIu64 " content=%s near=%" PRIu64
	       " random=%" PRIu64 " send_retries=%" PRIu64, fg->sent, fg->bytes,
	       fg_content_names[fg->content], fg->near, fg->random, fg->retries);
	if (fg->content == FG_MIX)
		printf(" valid=%" PRIu64, fg->count - fg->near - fg->random);
	printf(" from=%s", fg->spoof ? "spoofed" : fg->auth ? "own-session" : "own");
	for (size_t k = 0; k < FG_KINDS; k++)
		if (fg->per_kind[k])
			printf(" %s=%" PRIu64, fg_kinds[k].name, fg->per_kind[k]);
	for (size_t m = 0; !fg->auth && m < FG_TAG_MODES; m++)
		if (fg->per_tag[m])
			printf(" tag_%s=%" PRIu64, fg_tag_names[m], fg->per_tag[m]);
	if (fg->auth)
		printf(" hellos=%d resets=%d rewinds=%" PRIu64 " answers=%" PRIu64,
		       fg->s.hellos, fg->s.resets, fg->s.rewinds, fg->s.answers);
	printf("\n");
}
