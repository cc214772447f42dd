/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rdmx fuzzing: the harness without libFuzzer. Plays every input file
 * named on the command line, or every file of the directories named
 * (dot files and README.md skipped), through LLVMFuzzerTestOneInput, one
 * after the other; with no argument, the seed corpus and the regression
 * inputs of the source tree. A bug crashes it (or trips the sanitizers
 * of a sanitized build); the name of the input it was playing is the
 * last line printed.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static size_t g_played;

/* Plays one file; 0, or -1 when it cannot be read. */
static int replay_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	uint8_t *data = NULL;
	long len;
	int ret = -1;

	if (!f)
		goto err;
	if (fseek(f, 0, SEEK_END) || (len = ftell(f)) < 0 || fseek(f, 0, SEEK_SET))
		goto err_close;
	data = malloc((size_t) len + 1);
	if (!data || fread(data, 1, (size_t) len, f) != (size_t) len)
		goto err_close;
	printf("fuzz_replay: %s (%ld bytes)\n", path, len);
	fflush(stdout);
	LLVMFuzzerTestOneInput(data, (size_t) len);
	g_played++;
	ret = 0;
err_close:
	fclose(f);
err:
	free(data);
	if (ret)
		fprintf(stderr, "fuzz_replay: cannot read %s\n", path);
	return ret;
}

/* Plays every file of a directory, in name order. */
static int replay_dir(const char *dir)
{
	struct dirent **names;
	int n = scandir(dir, &names, NULL, alphasort);
	int ret = 0;

	if (n < 0) {
		fprintf(stderr, "fuzz_replay: cannot list %s\n", dir);
		return -1;
	}
	for (int i = 0; i < n; i++) {
		char path[4096];

		if (names[i]->d_name[0] != '.' && strcmp(names[i]->d_name, "README.md")) {
			snprintf(path, sizeof(path), "%s/%s", dir, names[i]->d_name);
			ret |= replay_file(path);
		}
		free(names[i]);
	}
	free(names);
	return ret;
}

static int replay_path(const char *path)
{
	struct stat st;

	if (stat(path, &st)) {
		fprintf(stderr, "fuzz_replay: no such input %s\n", path);
		return -1;
	}
	return S_ISDIR(st.st_mode) ? replay_dir(path) : replay_file(path);
}

int main(int argc, char **argv)
{
	int ret = 0;

	if (argc < 2) {
		ret |= replay_path(RDMX_FUZZ_DIR "/corpus");
		ret |= replay_path(RDMX_FUZZ_DIR "/regressions");
	}
	for (int i = 1; i < argc; i++)
		ret |= replay_path(argv[i]);
	printf("fuzz_replay: %zu inputs played\n", g_played);
	return ret ? 1 : 0;
}
