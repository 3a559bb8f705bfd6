/*
 * Host tests for the PS/2 scancode decoder (arch/x86_64/ps2_keymap.c):
 * set 1 and set 2 byte streams as QEMU's keyboard sends them for the
 * same typing give the same keys; Shift, Caps Lock, Ctrl combinations,
 * 0xe0 arrows and the Pause sequence.
 */
// HOST_SRCS: arch/x86_64/ps2_keymap.c
#include <stdint.h>
#include "arch/x86_64/ps2_keymap.h"
#include "lib/keys.h"
#include "lib/ktest.h"

static int decode_all(bool set2, const uint8_t *b, int n, int *keys)
{
	struct ps2_decoder d;
	int k = 0;

	ps2_decoder_init(&d, set2);
	for (int i = 0; i < n; i++) {
		int key = ps2_decode(&d, b[i]);

		if (key != KEY_NONE)
			keys[k++] = key;
	}
	return k;
}

/* "hI<-\n" : h, Shift+i, Left, Enter, each pressed and released. */
static const uint8_t set1[] = {
	0x23, 0xa3, 0x2a, 0x17, 0x97, 0xaa, 0xe0, 0x4b, 0xe0, 0xcb, 0x1c, 0x9c,
};
static const uint8_t set2[] = {
	0x33, 0xf0, 0x33, 0x12, 0x43, 0xf0, 0x43, 0xf0, 0x12,
	0xe0, 0x6b, 0xe0, 0xf0, 0x6b, 0x5a, 0xf0, 0x5a,
};

KTEST(ps2, set1_and_set2_agree)
{
	int k1[16], k2[16];

	ASSERT_EQ(decode_all(false, set1, sizeof(set1), k1), 4);
	ASSERT_EQ(decode_all(true, set2, sizeof(set2), k2), 4);
	EXPECT_EQ(k1[0], 'h');
	EXPECT_EQ(k1[1], 'I');
	EXPECT_EQ(k1[2], KEY_LEFT);
	EXPECT_EQ(k1[3], KEY_ENTER);
	for (int i = 0; i < 4; i++)
		EXPECT_EQ(k1[i], k2[i]);
}

KTEST(ps2, caps_lock_ctrl_and_symbols)
{
	/* Caps, a, Caps, Shift+2, -, Ctrl+c, Ctrl+u, Delete (e0 53) */
	static const uint8_t b[] = {
		0x3a, 0xba, 0x1e, 0x9e, 0x3a, 0xba, 0x36, 0x03, 0x83, 0xb6,
		0x0c, 0x8c, 0x1d, 0x2e, 0xae, 0x16, 0x96, 0x9d, 0xe0, 0x53,
		0xe0, 0xd3,
	};
	int k[16];

	ASSERT_EQ(decode_all(false, b, sizeof(b), k), 6);
	EXPECT_EQ(k[0], 'A');
	EXPECT_EQ(k[1], '@');
	EXPECT_EQ(k[2], '-');
	EXPECT_EQ(k[3], KEY_CANCEL);
	EXPECT_EQ(k[4], KEY_KILL);
	EXPECT_EQ(k[5], KEY_DELETE);
}

KTEST(ps2, pause_and_unknown_codes_vanish)
{
	static const uint8_t s1[] = {0xe1, 0x1d, 0x45, 0xe1, 0x9d, 0xc5,
				     0x3b, 0xbb, 0x39, 0xb9};
	static const uint8_t s2[] = {0x05, 0xf0, 0x05, 0x29, 0xf0, 0x29,
				     0xff, 0x83};
	int k[16];

	ASSERT_EQ(decode_all(false, s1, sizeof(s1), k), 1); /* F1, space */
	EXPECT_EQ(k[0], ' ');
	ASSERT_EQ(decode_all(true, s2, sizeof(s2), k), 1);
	EXPECT_EQ(k[0], ' ');
}
