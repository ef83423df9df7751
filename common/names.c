/* names.c - checks for names that become path components. */
#include <stdbool.h>
#include <stddef.h>

#include "names.h"

bool
name_is_safe(const char *s, size_t n)
{
	size_t	 i;

	if (s == NULL || n == 0 || n > NAME_MAX_LEN)
		return false;
	/* Covers "." and ".." as well as hidden files. */
	if (s[0] == '.')
		return false;
	for (i = 0; i < n; i++) {
		unsigned char	 c = (unsigned char)s[i];

		if (c == '/' || c == '\\' || c < 0x20 || c == 0x7f)
			return false;
	}
	return true;
}
