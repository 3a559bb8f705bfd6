/*
 * Fibonacci hashing for the cache model's small hashed tables (Knuth,
 * TAOCP vol. 3, 6.4): multiply by 2^64 / golden ratio and keep the top
 * bits. Every bit of the key reaches the top bits, so keys a power of
 * two apart (a copy's source and destination pages, lines of one cache
 * set) land in different slots, where their low bits would collide.
 * Host code only; the one home of the multiplier in cachemodel/.
 */
#ifndef CACHEMODEL_HASH_H
#define CACHEMODEL_HASH_H

#include <stdint.h>

/* 2^64 / golden ratio, odd. */
#define FIB_HASH_MULTIPLIER 0x9e3779b97f4a7c15ull

/* The top bits (1..64) of key's Fibonacci hash: a slot of a table of
 * 2^bits entries. */
static inline uint64_t fib_hash(uint64_t key, unsigned bits)
{
	return (key * FIB_HASH_MULTIPLIER) >> (64 - bits);
}

#endif
