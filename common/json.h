/* json.h - JSON files with positions for errors, and typed field access. */
#ifndef SLUICE_JSON_H
#define SLUICE_JSON_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#define CONF_ERRLEN	512

/* A parsed JSON file that keeps its text so that any error, including a
 * wrong type found after parsing, can be reported as file:line:column. */
struct jfile {
	char	*jf_path;	/* owned copy of the path given */
	char	*jf_text;	/* owned file contents, NUL-terminated */
	size_t	 jf_len;
	json_t	*jf_root;	/* owned reference */
};

/* Read and parse path (at most 4 MiB). Returns 0, or -1 with err set to
 * "path:line:column: message" (or "path: strerror" when unreadable). On
 * error *jf is left empty and jfile_free is still safe. After a failure
 * errno is that of open/read (ENOENT: no such file) or EINVAL when the
 * file was read but is not valid JSON or is too large. */
int	jfile_load(const char *path, struct jfile *jf, char err[CONF_ERRLEN]);

/* Same, from memory (tests); name stands in for the path in errors. */
int	jfile_parse(const char *name, const char *text, size_t len,
	    struct jfile *jf, char err[CONF_ERRLEN]);

void	jfile_free(struct jfile *jf);	/* safe on a zeroed or freed jf */

/* jfile_load keeps the text of files that have not changed for a
 * second and re-reads a file only when its inode, size, mtime or ctime
 * differ (json.c, "the file cache"). This forgets everything kept. */
void	jfile_cache_clear(void);
/* How many loads the kept texts have served in this process. */
unsigned long jfile_cache_hits(void);

/* Position of the first occurrence of "key" used as an object key in
 * the text (1-based); line 1, column 1 when it cannot be found. */
void	jfile_keypos(const struct jfile *jf, const char *key, int *line,
	    int *col);

/* Format "path:line:col: <key-specific message>" into err, pointing at
 * key (or at the start of the file when key is NULL). Returns -1 so
 * callers can `return jfile_err(...)`. */
int	jfile_err(const struct jfile *jf, const char *key, char err[CONF_ERRLEN],
	    const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* Position (1-based) of member key of the object obj, obj being a value
 * inside jf's tree (borrowed pointer; found by walking the text and the
 * tree together). Falls back to jfile_keypos when obj or key cannot be
 * located. With duplicate keys, the last one (the one jansson keeps). */
void	jfile_memberpos(const struct jfile *jf, const json_t *obj,
	    const char *key, int *line, int *col);

/* Position of element idx (0-based) of the array arr inside jf's tree;
 * the array's own position, or line 1 column 1, when not found. */
void	jfile_elempos(const struct jfile *jf, const json_t *arr, size_t idx,
	    int *line, int *col);

/* Like jfile_err, pointing at member key of obj / element idx of arr.
 * Both return -1. */
int	jfile_err_member(const struct jfile *jf, const json_t *obj,
	    const char *key, char err[CONF_ERRLEN], const char *fmt, ...)
	    __attribute__((format(printf, 5, 6)));
int	jfile_err_elem(const struct jfile *jf, const json_t *arr, size_t idx,
	    char err[CONF_ERRLEN], const char *fmt, ...)
	    __attribute__((format(printf, 5, 6)));

/* Short name of a JSON value's type for messages ("a string", "a list",
 * "an object", "a number", "true or false", "null"). */
const char *json_type_desc(const json_t *v);

/* Typed getters on object obj of file jf. A missing key or JSON null
 * yields the default. A present key of the wrong type is an error
 * ("path:line:col: 'key' must be a string", pointing at the key inside
 * obj). Strings are borrowed from the JSON tree. jget_int accepts a
 * number with an integral value that fits a long. All return 0 or -1
 * with err set. */
int	jget_str(const struct jfile *jf, json_t *obj, const char *key,
	    const char *def, const char **out, char err[CONF_ERRLEN]);
int	jget_bool(const struct jfile *jf, json_t *obj, const char *key,
	    bool def, bool *out, char err[CONF_ERRLEN]);
int	jget_int(const struct jfile *jf, json_t *obj, const char *key,
	    long def, long *out, char err[CONF_ERRLEN]);
int	jget_num(const struct jfile *jf, json_t *obj, const char *key,
	    double def, double *out, char err[CONF_ERRLEN]);

/* A value that is a string or a list of strings (e.g.
 * responseStartTextToRemove). *out is a NULL-terminated malloc'ed array
 * of borrowed strings (free the array only); missing gives an empty
 * array. */
int	jget_strlist(const struct jfile *jf, json_t *obj, const char *key,
	    const char ***out, char err[CONF_ERRLEN]);

/* Append JSON-escaped s (n bytes, need not be NUL-terminated) without
 * quotes; invalid UTF-8 bytes become U+FFFD (one per maximal invalid
 * subsequence). '"' and '\\' are escaped, \b \f \n \r \t use their
 * short forms, other control bytes (and DEL) become \u00XX; '/' and
 * valid non-ASCII UTF-8 are copied as they are. */
struct buf;
void	json_escape(struct buf *out, const char *s, size_t n);

#endif
