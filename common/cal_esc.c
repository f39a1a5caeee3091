/* Escaping text from outside before it reaches a terminal (cal_esc.h). */
#include "cal_esc.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* The code point of the UTF-8 sequence at s (n bytes left) and its length
 * in *len; -1 (with *len = 1) for a byte that starts no valid sequence
 * (stray continuation, overlong form, surrogate, beyond U+10FFFF). */
static long utf8_at(const unsigned char *s, size_t n, size_t *len) {
  *len = 1;
  unsigned c = s[0];
  size_t need = c >= 0xf0 && c <= 0xf4 ? 4 : c >= 0xe0 ? 3 : c >= 0xc2 ? 2 : 0;
  if (c >= 0xf5 || need == 0 || need > n)
    return -1;
  long cp = (long)(c & (0x7f >> need));
  for (size_t k = 1; k < need; k++) {
    if ((s[k] & 0xc0) != 0x80)
      return -1;
    cp = (cp << 6) | (s[k] & 0x3f);
  }
  static const long least[] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < least[need] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
    return -1;
  *len = need;
  return cp;
}

/* Whether code point cp is shown escaped. */
static int escaped_cp(long cp) {
  return (cp >= 0x80 && cp <= 0x9f) || cp == 0x61c || cp == 0x200e ||
         cp == 0x200f || (cp >= 0x2028 && cp <= 0x202e) ||
         (cp >= 0x2066 && cp <= 0x2069);
}

/* The escape of the character at s into out (at least 7 bytes): its
 * length, 0 when the *len bytes at s are kept as they are. */
static size_t escape_one(const unsigned char *s, size_t n, int flags,
                         size_t *len, char *out) {
  static const char hex[] = "0123456789abcdef";
  if (s[0] < 0x80) {
    *len = 1;
    if ((s[0] >= 0x20 && s[0] != 0x7f) ||
        ((flags & CAL_ESC_KEEP_LINES) && (s[0] == '\n' || s[0] == '\t')))
      return 0;
  } else {
    long cp = utf8_at(s, n, len);
    if (cp >= 0 && !escaped_cp(cp))
      return 0;
    if (cp >= 0) {
      out[0] = '\\';
      out[1] = 'u';
      for (int k = 0; k < 4; k++)
        out[2 + k] = hex[(cp >> (12 - 4 * k)) & 0xf];
      return 6;
    }
  }
  out[0] = '\\';
  out[1] = 'x';
  out[2] = hex[s[0] >> 4];
  out[3] = hex[s[0] & 0xf];
  return 4;
}

/* The escaped text of buf[0..n) into dst (cap bytes, NUL-terminated when
 * cap > 0, never a partial escape): the length the whole text needs. */
static size_t escape(const unsigned char *buf, size_t n, int flags, char *dst,
                     size_t cap) {
  size_t need = 0, at = 0, len;
  int full = cap == 0;
  char e[8];
  for (size_t i = 0; i < n; i += len) {
    size_t el = escape_one(buf + i, n - i, flags, &len, e);
    const char *src = el ? e : (const char *)buf + i;
    size_t w = el ? el : len;
    if (!full && at + w < cap) {
      memcpy(dst + at, src, w);
      at += w;
    } else {
      full = 1;
    }
    need += w;
  }
  if (cap)
    dst[at] = '\0';
  return need;
}

size_t cal_esc(char *dst, size_t len, const char *s) {
  return escape((const unsigned char *)(s ? s : ""), s ? strlen(s) : 0, 0, dst,
                len);
}

int cal_esc_needed(const char *buf, size_t n, int flags) {
  size_t len;
  char e[8];
  for (size_t i = 0; i < n; i += len)
    if (escape_one((const unsigned char *)buf + i, n - i, flags, &len, e))
      return 1;
  return 0;
}

char *cal_esc_text(const char *buf, size_t n, int flags, size_t *outlen) {
  const unsigned char *b = (const unsigned char *)buf;
  size_t need = escape(b, n, flags, NULL, 0);
  char *out = need < SIZE_MAX ? malloc(need + 1) : NULL;
  if (out)
    escape(b, n, flags, out, need + 1);
  if (outlen)
    *outlen = out ? need : 0;
  return out;
}

void cal_esc_line(FILE *f, const char *fmt, ...) {
  char msg[4096], safe[4096 * 4];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  cal_esc(safe, sizeof safe, msg);
  fprintf(f, "%s\n", safe);
}

int cal_esc_layout(FILE *out, void (*write)(const void *arg, FILE *f),
                   const void *arg) {
  char *buf = NULL, *safe = NULL;
  size_t len = 0, n = 0;
  FILE *f = open_memstream(&buf, &len);
  if (f) {
    write(arg, f);
    if (fclose(f) == 0 && buf)
      safe = cal_esc_text(buf, len, CAL_ESC_KEEP_LINES, &n);
  }
  if (safe)
    fwrite(safe, 1, n, out);
  else
    fputs("(out of memory laying out the text)\n", out);
  free(safe);
  free(buf);
  return safe ? 0 : -1;
}
