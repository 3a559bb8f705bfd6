/*
 * Host tests for trace/ctf.c: CRC32 and base64 against known vectors,
 * the framing of a small file set (sizes, CRCs, chunk tiling), and the
 * TSDL metadata (declares every event and the packet layout; refuses a
 * buffer that is too small).
 */
// HOST_SRCS: trace/ctf.c lib/string.c
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lib/ktest.h"
#include "tests/host/host_shim.h"
#include "trace/ctf.h"
#include "trace/tracepoint.h"

KTEST(ctf, crc32_known_vector)
{
	EXPECT_EQ(ctf_crc32(0, "123456789", 9), 0xcbf43926u);
	EXPECT_EQ(ctf_crc32(0, "", 0), 0);
	/* chained == whole */
	EXPECT_EQ(ctf_crc32(ctf_crc32(0, "1234", 4), "56789", 5),
		  0xcbf43926u);
}

KTEST(ctf, base64_known_vectors)
{
	char out[16];

	EXPECT_EQ(ctf_base64(out, "foobar", 6), 8);
	EXPECT_STREQ(out, "Zm9vYmFy");
	EXPECT_EQ(ctf_base64(out, "fooba", 5), 8);
	EXPECT_STREQ(out, "Zm9vYmE=");
	EXPECT_EQ(ctf_base64(out, "f", 1), 4);
	EXPECT_STREQ(out, "Zg==");
}

static char framed[1 << 16];
static size_t framed_len;

static void sink(const char *s, size_t n)
{
	if (framed_len + n < sizeof(framed)) {
		memcpy(framed + framed_len, s, n);
		framed_len += n;
	}
}

KTEST(ctf, frame_tiles_files)
{
	static uint8_t a[200], b[57];
	struct ctf_file files[] = {{"metadata", a, sizeof(a)},
				   {"stream_0", b, sizeof(b)}};
	unsigned long chunks;

	for (unsigned i = 0; i < sizeof(a); i++)
		a[i] = (uint8_t)(i * 7);
	framed_len = 0;
	chunks = ctf_frame(sink, files, 2);
	framed[framed_len] = '\0';
	/* 200 bytes: 4 chunks (57 57 57 29); 57 bytes: 1 chunk */
	EXPECT_EQ(chunks, 5);
	EXPECT_TRUE(strstr(framed, "@@TRACE-BEGIN v1 files=2\n") == framed);
	EXPECT_TRUE(strstr(framed, "@@TRACE-CHUNK 0 171 29 ") != NULL);
	EXPECT_TRUE(strstr(framed, "@@TRACE-END chunks=5 bytes=257\n") !=
		    NULL);
	char want[64];
	snprintf(want, sizeof(want), "@@TRACE-FILE 0 metadata 200 %08x\n",
		 ctf_crc32(0, a, sizeof(a)));
	EXPECT_TRUE(strstr(framed, want) != NULL);
}

KTEST(ctf, metadata_declares_events)
{
	static char meta[16384];
	const uint8_t uuid[16] = {1, 2, 3};
	size_t n = ctf_metadata(meta, sizeof(meta), uuid, 1000000000);

	ASSERT_TRUE(n > 0);
	EXPECT_EQ(strlen(meta), n);
	EXPECT_TRUE(strstr(meta, "uuid = \"01020300-0000-") != NULL);
	EXPECT_TRUE(strstr(meta, "name = \"page_alloc\";\n\tid = 1;") != NULL);
	EXPECT_TRUE(strstr(meta, "name = \"tlb_shootdown\"") != NULL);
	EXPECT_TRUE(strstr(meta, "freq = 1000000000;") != NULL);
	EXPECT_EQ(ctf_metadata(meta, 100, uuid, 1), 0);
}
