/*
 * CTF 1.8 export of the trace channel: the TSDL metadata that describes
 * the packets trace/ring_buffer.c writes, and the framing that carries
 * metadata and one stream per CPU over a byte-oriented line (the serial
 * port) so that tools/results/trace_extract.py can rebuild the CTF
 * directory and babeltrace2 can read it.
 *
 * Framing: text lines, each self-checking.
 *
 *   @@TRACE-BEGIN v1 files=N
 *   @@TRACE-FILE i name bytes crc32
 *   @@TRACE-CHUNK i offset length crc32 base64-of-the-bytes
 *   @@TRACE-END chunks=M bytes=B
 *
 * Every chunk names its file and offset and carries the CRC32 (IEEE,
 * as zlib) of its bytes; every file announces its size and CRC32 first.
 * A damaged, missing or repeated chunk is detected, never misread.
 */
#ifndef TRACE_CTF_H
#define TRACE_CTF_H

#include <stddef.h>
#include <stdint.h>

/* Raw bytes per chunk line (a multiple of 3: no base64 padding inside). */
#define CTF_CHUNK_BYTES 57

/*
 * Write the TSDL metadata for a channel with this UUID and a clock of
 * clock_hz into buf (room bytes). Returns the length (without the NUL),
 * or 0 if room is too small.
 */
size_t ctf_metadata(char *buf, size_t room, const uint8_t uuid[16],
		    uint64_t clock_hz);

/* CRC32 (IEEE 802.3, reflected, as zlib's crc32()) of n bytes, chained. */
uint32_t ctf_crc32(uint32_t crc, const void *p, size_t n);

/* base64 of n bytes into out (4 * ceil(n / 3) + 1 bytes); returns length. */
size_t ctf_base64(char *out, const void *p, size_t n);

/* Where framed lines go (one call per complete line, '\n' included). */
typedef void (*ctf_write_fn)(const char *s, size_t n);

/* A file to export: name and bytes. */
struct ctf_file {
	const char *name;
	const void *data;
	size_t bytes;
};

/*
 * Frame files[0..n) as described above, through write. Returns the
 * number of chunk lines written.
 */
unsigned long ctf_frame(ctf_write_fn write, const struct ctf_file *files,
			unsigned n);

#endif
