/*
 * A cache model for host tests, from a profile text in the format of
 * cachemodel/profiles.txt (cachemodel/profile.h). Header-only; the test
 * program names cachemodel/profile.c and the model's sources in its
 * HOST_SRCS line.
 */
#ifndef TESTS_HOST_CM_TEST_MODEL_H
#define TESTS_HOST_CM_TEST_MODEL_H

#include <stdio.h>
#include <stdlib.h>
#include "cachemodel/model.h"
#include "cachemodel/profile.h"

/* A model of ncpus CPUs with the profile name of text. A profile that
 * does not parse, or a model that cannot be made, ends the program with
 * a message: a test cannot go on without its machine. */
static inline struct cm_model *cm_test_model(const char *text,
					     const char *name,
					     unsigned ncpus)
{
	struct cm_profile p;
	char err[128];
	struct cm_model *m;

	if (!cm_profile_parse(text, name, &p, err, sizeof(err))) {
		fprintf(stderr, "profile %s: %s\n", name, err);
		abort();
	}
	m = cm_create(&p, ncpus);
	if (!m) {
		fprintf(stderr, "profile %s: no model of %u CPUs\n", name,
			ncpus);
		abort();
	}
	return m;
}

#endif
