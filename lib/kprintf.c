/*
 * kvsnprintf(): a small, portable printf engine. The compiler checks every
 * call through the format attribute in kprintf.h, so only the conversions
 * listed there are implemented; anything else is printed literally so a
 * mistake shows up in the log instead of crashing the kernel.
 */
#include <stdbool.h>
#include <stdint.h>
#include "kprintf.h"
#include "string.h"

struct out {
	char *buf;
	size_t size;
	size_t len; /* characters that would have been written */
};

static void put(struct out *o, char c)
{
	if (o->len + 1 < o->size)
		o->buf[o->len] = c;
	o->len++;
}

static void pad(struct out *o, char c, int n)
{
	while (n-- > 0)
		put(o, c);
}

struct spec {
	bool left;
	bool zero;
	bool alt;
	bool plus;
	bool space;
	int width;
	int prec; /* -1: none */
};

static void put_str(struct out *o, const struct spec *sp, const char *s)
{
	size_t n;
	int fill;

	if (!s)
		s = "(null)";
	n = sp->prec >= 0 ? strnlen(s, (size_t)sp->prec) : strlen(s);
	fill = sp->width - (int)n;
	if (!sp->left)
		pad(o, ' ', fill);
	while (n--)
		put(o, *s++);
	if (sp->left)
		pad(o, ' ', fill);
}

/* %c: one character, padded to the width. */
static void put_char(struct out *o, const struct spec *sp, char c)
{
	if (!sp->left)
		pad(o, ' ', sp->width - 1);
	put(o, c);
	if (sp->left)
		pad(o, ' ', sp->width - 1);
}

static void put_num(struct out *o, const struct spec *sp, uint64_t v,
		    bool neg, unsigned base, bool upper, const char *prefix)
{
	const char *digits = upper ? "0123456789ABCDEF" : "0123456789abcdef";
	char tmp[24];
	int n = 0, plen = prefix ? (int)strlen(prefix) : 0, fill, zeros = 0;
	char sign = neg ? '-' : sp->plus ? '+' : sp->space ? ' ' : 0;

	do {
		tmp[n++] = digits[v % base];
		v /= base;
	} while (v);
	if (sp->prec > n)
		zeros = sp->prec - n;
	fill = sp->width - n - zeros - plen - (sign ? 1 : 0);
	if (sp->zero && !sp->left && sp->prec < 0) {
		zeros += fill > 0 ? fill : 0;
		fill = 0;
	}
	if (!sp->left)
		pad(o, ' ', fill);
	if (sign)
		put(o, sign);
	for (int i = 0; i < plen; i++)
		put(o, prefix[i]);
	pad(o, '0', zeros);
	while (n)
		put(o, tmp[--n]);
	if (sp->left)
		pad(o, ' ', fill);
}

/*
 * The steps of reading a conversion's spec. They are always inlined:
 * kvsnprintf() then runs the instructions of one loop, as counted
 * figures (QEMU -icount) of code that formats in its measured loop
 * expect.
 *
 * Flags of a conversion, from fmt (just past its '%') into *sp; returns
 * what follows them.
 */
static inline __attribute__((always_inline)) const char *
parse_flags(const char *fmt, struct spec *sp)
{
	for (;; fmt++) {
		if (*fmt == '-')
			sp->left = true;
		else if (*fmt == '0')
			sp->zero = true;
		else if (*fmt == '#')
			sp->alt = true;
		else if (*fmt == '+')
			sp->plus = true;
		else if (*fmt == ' ')
			sp->space = true;
		else
			return fmt;
	}
}

/* A length modifier at fmt into *lng (-2 hh, -1 h, 0 none, 1 l, 2 ll,
 * 3 z); returns what follows it. */
static inline __attribute__((always_inline)) const char *
parse_length(const char *fmt, int *lng)
{
	if (*fmt == 'h') {
		*lng = -1;
		if (*++fmt == 'h') {
			*lng = -2;
			fmt++;
		}
	} else if (*fmt == 'l') {
		*lng = 1;
		if (*++fmt == 'l') {
			*lng = 2;
			fmt++;
		}
	} else if (*fmt == 'z') {
		*lng = 3;
		fmt++;
	}
	return fmt;
}

int kvsnprintf(char *buf, size_t size, const char *fmt, va_list ap)
{
	struct out o = {buf, size, 0};

	while (*fmt) {
		struct spec sp = {false, false, false, false, false, 0, -1};
		const char *start = fmt;
		int lng = 0; /* -2 hh, -1 h, 0 int, 1 long, 2 long long, 3 size_t */

		if (*fmt != '%') {
			put(&o, *fmt++);
			continue;
		}
		fmt = parse_flags(fmt + 1, &sp);
		if (*fmt == '*') {
			sp.width = va_arg(ap, int);
			if (sp.width < 0) {
				sp.left = true;
				sp.width = -sp.width;
			}
			fmt++;
		} else {
			while (*fmt >= '0' && *fmt <= '9')
				sp.width = sp.width * 10 + (*fmt++ - '0');
		}
		if (*fmt == '.') {
			fmt++;
			sp.prec = 0;
			if (*fmt == '*') {
				sp.prec = va_arg(ap, int);
				fmt++;
			} else {
				while (*fmt >= '0' && *fmt <= '9')
					sp.prec = sp.prec * 10 + (*fmt++ - '0');
			}
		}
		fmt = parse_length(fmt, &lng);
		switch (*fmt) {
		case 'd':
		case 'i': {
			int64_t v;
			if (lng == 1)
				v = va_arg(ap, long);
			else if (lng == 2)
				v = va_arg(ap, long long);
			else if (lng == 3)
				v = (int64_t)va_arg(ap, size_t);
			else
				v = va_arg(ap, int);
			if (lng == -1)
				v = (short)v;
			else if (lng == -2)
				v = (signed char)v;
			put_num(&o, &sp, v < 0 ? -(uint64_t)v : (uint64_t)v,
				v < 0, 10, false, NULL);
			break;
		}
		case 'u':
		case 'x':
		case 'X':
		case 'o': {
			uint64_t v;
			unsigned base = *fmt == 'u' ? 10 : *fmt == 'o' ? 8 : 16;
			const char *prefix = NULL;
			if (lng == 1)
				v = va_arg(ap, unsigned long);
			else if (lng == 2)
				v = va_arg(ap, unsigned long long);
			else if (lng == 3)
				v = va_arg(ap, size_t);
			else
				v = va_arg(ap, unsigned int);
			if (lng == -1)
				v = (unsigned short)v;
			else if (lng == -2)
				v = (unsigned char)v;
			if (sp.alt && v) {
				if (base == 16)
					prefix = *fmt == 'X' ? "0X" : "0x";
				else if (base == 8)
					prefix = "0";
			}
			put_num(&o, &sp, v, false, base, *fmt == 'X', prefix);
			break;
		}
		case 'p':
			sp.zero = true;
			sp.width = 16 + 2;
			sp.prec = -1;
			put_num(&o, &sp, (uintptr_t)va_arg(ap, void *), false,
				16, false, "0x");
			break;
		case 's':
			put_str(&o, &sp, va_arg(ap, const char *));
			break;
		case 'c':
			put_char(&o, &sp, (char)va_arg(ap, int));
			break;
		case '%':
			put(&o, '%');
			break;
		default:
			/* Unknown conversion: print it as it stands. */
			while (start < fmt + (*fmt ? 1 : 0))
				put(&o, *start++);
			if (!*fmt)
				goto done;
			break;
		}
		fmt++;
	}
done:
	if (size)
		buf[o.len < size ? o.len : size - 1] = '\0';
	return (int)o.len;
}

int ksnprintf(char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = kvsnprintf(buf, size, fmt, ap);
	va_end(ap);
	return n;
}

/* Lines longer than this are cut; the log is for people, not bulk data. */
#define KPRINTF_BUF 512

int kvprintf(const char *fmt, va_list ap)
{
	char buf[KPRINTF_BUF];
	int n = kvsnprintf(buf, sizeof(buf), fmt, ap);

	console_write(buf, n < (int)sizeof(buf) ? (size_t)n : sizeof(buf) - 1);
	return n;
}

int kprintf(const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = kvprintf(fmt, ap);
	va_end(ap);
	return n;
}
