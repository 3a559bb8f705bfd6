/*
 * The kernel's version and the git commit it was built from (generated
 * into build/k/version.c by the Makefile; "-dirty" when the tree had
 * uncommitted changes).
 */
#ifndef KERNEL_VERSION_H
#define KERNEL_VERSION_H

extern const char kernel_version[];
extern const char kernel_git_hash[];

#endif
