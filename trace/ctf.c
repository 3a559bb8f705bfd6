/*
 * CTF 1.8 metadata and serial framing (see trace/ctf.h). Portable: the
 * host tests check the encoders; the kernel and tools/results/trace_extract.py
 * meet on the format.
 *
 * The metadata mirrors struct rb_packet_header and the record headers
 * of trace/ring_buffer.h field for field, and expands the event list of
 * trace/tracepoint.h, so an event declared there is described here with
 * no second list to keep.
 */
#include "trace/ctf.h"
#include "lib/kprintf.h"
#include "lib/string.h"
#include "trace/ring_buffer.h"
#include "trace/tracepoint.h"

#define CRC32_POLY_REFLECTED 0xedb88320u
#define UUID_STR 37

static const char tsdl_head[] =
	"/* CTF 1.8 */\n"
	"typealias integer { size = 8; align = 8; signed = false; } := "
	"uint8_t;\n"
	"typealias integer { size = 16; align = 16; signed = false; } := "
	"uint16_t;\n"
	"typealias integer { size = 32; align = 32; signed = false; } := "
	"uint32_t;\n"
	"typealias integer { size = 64; align = 64; signed = false; } := "
	"uint64_t;\n"
	"typealias integer { size = 5; align = 1; signed = false; } := "
	"uint5_t;\n"
	"typealias integer { size = 27; align = 1; signed = false; "
	"map = clock.cycles.value; } := uint27_clock_t;\n"
	"typealias integer { size = 64; align = 64; signed = false; "
	"map = clock.cycles.value; } := uint64_clock_t;\n"
	/* The extended header's fields start at byte 4 (see ring_buffer.h) */
	"typealias integer { size = 64; align = 32; signed = false; "
	"map = clock.cycles.value; } := uint64_clock_a32_t;\n\n";

/* Fields of one event's payload, as TSDL. */
#define CTF_FIELD_(type, field) "\t\t" #type " " #field ";\n"
#define CTF_EVENT_(name, fields)                                            \
	"event {\n\tname = \"" #name "\";\n\tid = %u;\n\tstream_id = 0;\n"  \
	"\tfields := struct {\n" fields "\t};\n};\n\n",
static const char *const tsdl_events[TRACE_EVENT_NR] = {
	TRACE_EVENTS(CTF_EVENT_, CTF_FIELD_)};

static void uuid_string(char out[UUID_STR], const uint8_t u[16])
{
	static const char hex[] = "0123456789abcdef";
	size_t o = 0;

	for (unsigned i = 0; i < 16; i++) {
		if (i == 4 || i == 6 || i == 8 || i == 10)
			out[o++] = '-';
		out[o++] = hex[u[i] >> 4];
		out[o++] = hex[u[i] & 15];
	}
	out[o] = '\0';
}

size_t ctf_metadata(char *buf, size_t room, const uint8_t uuid[16],
		    uint64_t clock_hz)
{
	char us[UUID_STR];
	size_t len = 0;
	int n;

	uuid_string(us, uuid);
#define EMIT(...)                                                           \
	do {                                                                \
		n = ksnprintf(buf + len, room - len, __VA_ARGS__);          \
		if (n < 0 || (size_t)n >= room - len)                       \
			return 0;                                           \
		len += (size_t)n;                                           \
	} while (0)
	if (room == 0)
		return 0;
	EMIT("%s", tsdl_head);
	EMIT("trace {\n\tmajor = 1;\n\tminor = 8;\n\tuuid = \"%s\";\n"
	     "\tbyte_order = le;\n\tpacket.header := struct {\n"
	     "\t\tuint32_t magic;\n\t\tuint8_t uuid[16];\n"
	     "\t\tuint32_t stream_id;\n\t};\n};\n\n", us);
	EMIT("env {\n\tdomain = \"kernel\";\n\ttracer_name = \"trace\";\n"
	     "};\n\n");
	EMIT("clock {\n\tname = \"cycles\";\n\tdescription = \"TSC\";\n"
	     "\tfreq = %llu;\n\toffset = 0;\n};\n\n",
	     (unsigned long long)clock_hz);
	EMIT("stream {\n\tid = 0;\n\tevent.header := struct {\n"
	     "\t\tenum : uint5_t { compact = 0 ... %u, extended = %u } id;\n"
	     "\t\tvariant <id> {\n"
	     "\t\t\tstruct { uint27_clock_t timestamp; } compact;\n"
	     "\t\t\tstruct { uint32_t id; uint64_clock_a32_t timestamp; } "
	     "extended;\n\t\t} v;\n\t} align(%u);\n"
	     "\tpacket.context := struct {\n"
	     "\t\tuint64_clock_t timestamp_begin;\n"
	     "\t\tuint64_clock_t timestamp_end;\n"
	     "\t\tuint64_t content_size;\n\t\tuint64_t packet_size;\n"
	     "\t\tuint64_t packet_seq_num;\n\t\tuint64_t events_discarded;\n"
	     "\t\tuint32_t cpu_id;\n\t\tuint32_t padding;\n\t};\n};\n\n",
	     RB_EXTENDED_ID - 1, RB_EXTENDED_ID, RB_RECORD_ALIGN * 8);
	for (unsigned id = 0; id < TRACE_EVENT_NR; id++)
		EMIT(tsdl_events[id], id);
#undef EMIT
	return len;
}

uint32_t ctf_crc32(uint32_t crc, const void *p, size_t n)
{
	const uint8_t *b = p;

	crc = ~crc;
	while (n--) {
		crc ^= *b++;
		for (int k = 0; k < 8; k++)
			crc = (crc >> 1) ^ (CRC32_POLY_REFLECTED & -(crc & 1));
	}
	return ~crc;
}

size_t ctf_base64(char *out, const void *p, size_t n)
{
	static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
				       "abcdefghijklmnopqrstuvwxyz0123456789+/";
	const uint8_t *b = p;
	size_t o = 0;

	for (size_t i = 0; i < n; i += 3) {
		uint32_t v = (uint32_t)b[i] << 16;

		if (i + 1 < n)
			v |= (uint32_t)b[i + 1] << 8;
		if (i + 2 < n)
			v |= b[i + 2];
		out[o++] = alphabet[(v >> 18) & 63];
		out[o++] = alphabet[(v >> 12) & 63];
		out[o++] = i + 1 < n ? alphabet[(v >> 6) & 63] : '=';
		out[o++] = i + 2 < n ? alphabet[v & 63] : '=';
	}
	out[o] = '\0';
	return o;
}

/* A chunk line: prefix, four numbers, base64, newline. */
#define CTF_LINE_MAX (64 + 4 * (CTF_CHUNK_BYTES / 3) + 2)

unsigned long ctf_frame(ctf_write_fn write, const struct ctf_file *files,
			unsigned n)
{
	char line[CTF_LINE_MAX];
	unsigned long chunks = 0, total = 0;
	int len;

	len = ksnprintf(line, sizeof(line), "@@TRACE-BEGIN v1 files=%u\n", n);
	write(line, (size_t)len);
	for (unsigned f = 0; f < n; f++) {
		const uint8_t *d = files[f].data;

		len = ksnprintf(line, sizeof(line),
				"@@TRACE-FILE %u %s %lu %08x\n", f,
				files[f].name, (unsigned long)files[f].bytes,
				ctf_crc32(0, d, files[f].bytes));
		write(line, (size_t)len);
		for (size_t off = 0; off < files[f].bytes;
		     off += CTF_CHUNK_BYTES) {
			size_t k = files[f].bytes - off;

			if (k > CTF_CHUNK_BYTES)
				k = CTF_CHUNK_BYTES;
			len = ksnprintf(line, sizeof(line),
					"@@TRACE-CHUNK %u %lu %lu %08x ", f,
					(unsigned long)off, (unsigned long)k,
					ctf_crc32(0, d + off, k));
			len += (int)ctf_base64(line + len, d + off, k);
			line[len++] = '\n';
			write(line, (size_t)len);
			chunks++;
		}
		total += files[f].bytes;
	}
	len = ksnprintf(line, sizeof(line), "@@TRACE-END chunks=%lu bytes=%lu\n",
			chunks, total);
	write(line, (size_t)len);
	return chunks;
}
