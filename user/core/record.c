// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The load record (see record.h): written and read as JSON with json-c.
 * Core part: must not need libbpf.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <json-c/json.h>

#include "core/record.h"
#include "core/sha.h"

/* A record names a few list files: anything this large is not one. */
#define RECORD_MAX (16U << 20)

const char *bg_pin_dir(void)
{
	const char *d = getenv("BLOOMGATE_PIN_DIR");

	return d && *d ? d : BG_PIN_DIR;
}

void bg_run_path(char *buf, size_t len, const char *suffix)
{
	const char *d = bg_pin_dir();
	size_t i, o, sl = strlen(suffix);

	o = (size_t)snprintf(buf, len, "%s/", BG_RECORD_DIR);
	for (i = 0; d[i] && o + 1 < len; i++)
		buf[o++] = d[i] == '/' ? '_' : d[i];
	if (o + sl < len)
		memcpy(buf + o, suffix, sl + 1);
	else
		buf[len - 1] = 0;
}

void bg_record_path(char *buf, size_t len)
{
	bg_run_path(buf, len, ".lists");
}

void bg_record_dir(char *buf, size_t len)
{
	bg_run_path(buf, len, ".records");
}

void bg_record_id_path(char *buf, size_t len, __u32 filter_id)
{
	char suffix[32];

	snprintf(suffix, sizeof(suffix), ".records/%u", filter_id);
	bg_run_path(buf, len, suffix);
}

/* Adds v as o[key], taking v; -ENOMEM when v is NULL (its constructor ran
 * out of memory) or the add fails. */
static int add(struct json_object *o, const char *key, struct json_object *v)
{
	if (!v)
		return -ENOMEM;
	if (json_object_object_add(o, key, v)) {
		json_object_put(v);
		return -ENOMEM;
	}
	return 0;
}

static struct json_object *source_json(const struct bg_source *s)
{
	struct json_object *o = json_object_new_object();
	char abs[PATH_MAX];
	/* "-" stays "-": standard input is not a file to find again (nor
	 * a file named "-" in the current directory) */
	const char *p = strcmp(s->path, "-") && realpath(s->path, abs) ? abs :
									 s->path;

	if (!o)
		return NULL;
	if (add(o, "role", json_object_new_string(s->list.allow ? "allow" : "block")) ||
	    add(o, "format", json_object_new_string(bg_format_name(s->list.format))) ||
	    add(o, "subdomains", json_object_new_boolean(s->list.subdomains != 0)) ||
	    add(o, "allow_wide", json_object_new_boolean(s->list.allow_wide != 0)) ||
	    add(o, "path", json_object_new_string(p))) {
		json_object_put(o);
		return NULL;
	}
	return o;
}

static struct json_object *record_json(__u32 filter_id,
				       const struct bg_source *src, size_t n,
				       const char *art, const __u8 *art_sha)
{
	struct json_object *root = json_object_new_object(), *arr, *a;
	char abs[PATH_MAX], hex[65];
	size_t i;

	if (!root)
		return NULL;
	arr = json_object_new_array();
	if (add(root, "version", json_object_new_int(BG_RECORD_VERSION)) ||
	    add(root, "filter_id", json_object_new_int64(filter_id)) ||
	    add(root, "sources", arr))
		goto fail;
	if (art) {
		a = json_object_new_object();
		bg_sha_hex(art_sha, hex);
		if (add(root, "artifact", a) ||
		    add(a, "path", json_object_new_string(realpath(art, abs) ? abs : art)) ||
		    add(a, "sha256", json_object_new_string(hex)))
			goto fail;
	}
	for (i = 0; i < n; i++) {
		struct json_object *s = source_json(&src[i]);

		if (!s)
			goto fail;
		if (json_object_array_add(arr, s)) {
			json_object_put(s);
			goto fail;
		}
	}
	return root;
fail:
	json_object_put(root);
	return NULL;
}

static int write_all(int fd, const char *buf, size_t len)
{
	while (len) {
		ssize_t w = write(fd, buf, len);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		buf += w;
		len -= (size_t)w;
	}
	return 0;
}

static int record_write(__u32 filter_id, const struct bg_source *src, size_t n,
			const char *art, const __u8 *art_sha)
{
	char dir[PATH_MAX], path[PATH_MAX], tmp[PATH_MAX + 8];
	struct json_object *root;
	const char *text;
	size_t len;
	int fd, err;

	bg_record_dir(dir, sizeof(dir));
	/* 0755 as the agent and the unit's RuntimeDirectoryMode make it (its
	 * control socket is reached through it); the records' own 0700 */
	if ((mkdir(BG_RECORD_DIR, 0755) && errno != EEXIST) ||
	    (mkdir(dir, 0700) && errno != EEXIST))
		return -errno;
	root = record_json(filter_id, src, n, art, art_sha);
	if (!root)
		return -ENOMEM;
	text = json_object_to_json_string_length(root, JSON_C_TO_STRING_PRETTY |
						 JSON_C_TO_STRING_NOSLASHESCAPE,
						 &len);
	if (!text) {
		json_object_put(root);
		return -ENOMEM;
	}
	/* A reader sees the whole record or none, never a part: write a
	 * temporary file beside it (same file system) and rename it. A
	 * temporary file a kill leaves is removed by bg_record_keep(). */
	bg_record_id_path(path, sizeof(path), filter_id);
	snprintf(tmp, sizeof(tmp), "%s.XXXXXX", path);
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		json_object_put(root);
		return err;
	}
	err = write_all(fd, text, len);
	if (!err)
		err = write_all(fd, "\n", 1);
	json_object_put(root);
	if (!err && fsync(fd))
		err = -errno;
	if (close(fd) && !err)
		err = -errno;
	if (!err && rename(tmp, path))
		err = -errno;
	if (err)
		unlink(tmp);
	return err;
}

int bg_record_write(__u32 filter_id, const struct bg_source *src, size_t n)
{
	return record_write(filter_id, src, n, NULL, NULL);
}

int bg_record_write_artifact(__u32 filter_id, const char *path,
			     const __u8 sha[32])
{
	return record_write(filter_id, NULL, 0, path, sha);
}

/* The symlink P.lists switched to P.records/<name>: a new symlink made
 * beside the records and renamed over it, so a reader of P.lists finds
 * the old record or the new one, never no link. */
static int make_current(const char *dir, const char *name)
{
	char link[PATH_MAX], tmp[PATH_MAX + 16], target[PATH_MAX + 16];
	const char *base = strrchr(dir, '/');

	bg_record_path(link, sizeof(link));
	/* relative: the link and the directory sit side by side */
	snprintf(target, sizeof(target), "%s/%s", base ? base + 1 : dir, name);
	snprintf(tmp, sizeof(tmp), "%s/.current", dir);
	unlink(tmp); /* a kill's leftover (the lock keeps writers apart) */
	if (symlink(target, tmp))
		return -errno;
	if (rename(tmp, link)) {
		int err = -errno;

		unlink(tmp);
		return err;
	}
	return 0;
}

int bg_record_keep(__u32 live_id)
{
	char dir[PATH_MAX], path[PATH_MAX], keep[16];
	struct stat sb;
	struct dirent *de;
	int err = 0, have;
	DIR *d;

	bg_record_dir(dir, sizeof(dir));
	bg_record_id_path(path, sizeof(path), live_id);
	snprintf(keep, sizeof(keep), "%u", live_id);
	have = live_id && !lstat(path, &sb) && S_ISREG(sb.st_mode);
	if (have) {
		err = make_current(dir, keep);
	} else {
		bg_record_path(path, sizeof(path));
		if (unlink(path) && errno != ENOENT)
			err = -errno;
	}
	d = opendir(dir);
	if (!d)
		return err || errno == ENOENT ? err : -errno;
	/* Everything but the live record: records of filters no longer in
	 * the slot, temporary files of a write that was killed. */
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..") ||
		    (have && !strcmp(de->d_name, keep)))
			continue;
		if (unlinkat(dirfd(d), de->d_name, 0) && errno != ENOENT && !err)
			err = -errno;
	}
	closedir(d);
	if (!have && rmdir(dir) && errno != ENOENT && !err)
		err = -errno;
	return err;
}

/* The whole file at path, NUL-terminated, in *buf (malloc'ed). */
static int read_file(const char *path, char **buf, size_t *len)
{
	size_t cap = 4096, n = 0;
	char *b = NULL, *nb;
	int fd, err = 0;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	for (;;) {
		ssize_t r;

		if (!b || n + 1 == cap) {
			if (b)
				cap *= 2;
			nb = cap > RECORD_MAX ? NULL : realloc(b, cap);
			if (!nb) {
				err = cap > RECORD_MAX ? -EPROTO : -ENOMEM;
				break;
			}
			b = nb;
		}
		r = read(fd, b + n, cap - n - 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			err = -errno;
			break;
		}
		if (!r)
			break;
		n += (size_t)r;
	}
	close(fd);
	if (err) {
		free(b);
		return err;
	}
	b[n] = 0;
	*buf = b;
	*len = n;
	return 0;
}

/* The JSON document in buf, and nothing after it but white space. */
static struct json_object *parse(const char *buf, size_t len)
{
	struct json_tokener *tok;
	struct json_object *root;
	size_t end;

	if (len > INT_MAX)
		return NULL;
	tok = json_tokener_new();
	if (!tok)
		return NULL;
	root = json_tokener_parse_ex(tok, buf, (int)len);
	end = json_tokener_get_parse_end(tok);
	if (root && json_tokener_get_error(tok) == json_tokener_success) {
		while (end < len && buf[end] && strchr(" \t\r\n", buf[end]))
			end++;
	}
	if (root && end != len) {
		json_object_put(root);
		root = NULL;
	}
	json_tokener_free(tok);
	return root;
}

/* A string member of o: NULL when missing, not a string, or holding a NUL
 * (it could not be a path or a name). */
static const char *get_string(struct json_object *o, const char *key)
{
	struct json_object *v;
	const char *s;

	if (!json_object_object_get_ex(o, key, &v) ||
	    !json_object_is_type(v, json_type_string))
		return NULL;
	s = json_object_get_string(v);
	return strlen(s) == (size_t)json_object_get_string_len(v) ? s : NULL;
}

/* An integer member of o in [0, max], or -1. */
static int64_t get_uint(struct json_object *o, const char *key, int64_t max)
{
	struct json_object *v;
	int64_t x;

	if (!json_object_object_get_ex(o, key, &v) ||
	    !json_object_is_type(v, json_type_int))
		return -1;
	x = json_object_get_int64(v);
	return x >= 0 && x <= max ? x : -1;
}

/* One element of "sources"; 0, 1 when it is not understood, or -ENOMEM. */
static int source_of(struct json_object *o, struct bg_source *src)
{
	const char *role, *fmt, *path;
	struct json_object *sub, *wide;
	int f;

	memset(src, 0, sizeof(*src));
	if (!json_object_is_type(o, json_type_object))
		return 1;
	role = get_string(o, "role");
	fmt = get_string(o, "format");
	path = get_string(o, "path");
	if (!role || !fmt || !path || !*path ||
	    (strcmp(role, "block") && strcmp(role, "allow")))
		return 1;
	f = bg_format_parse(fmt);
	if (f <= BG_FMT_AUTO)
		return 1;
	if (!json_object_object_get_ex(o, "subdomains", &sub) ||
	    !json_object_is_type(sub, json_type_boolean))
		return 1;
	src->list.allow = !strcmp(role, "allow");
	src->list.format = (uint8_t)f;
	src->list.subdomains = json_object_get_boolean(sub) ? 1 : 0;
	/* absent in a record written before it: the default, refused */
	if (json_object_object_get_ex(o, "allow_wide", &wide)) {
		if (!json_object_is_type(wide, json_type_boolean))
			return 1;
		src->list.allow_wide = json_object_get_boolean(wide) ? 1 : 0;
	}
	src->path = strdup(path);
	return src->path ? 0 : -ENOMEM;
}

static int record_of(struct json_object *root, struct bg_record *r)
{
	struct json_object *arr, *art;
	int64_t id;
	size_t i, n;

	if (!json_object_is_type(root, json_type_object) ||
	    get_uint(root, "version", INT64_MAX) != BG_RECORD_VERSION)
		return -EPROTO;
	id = get_uint(root, "filter_id", UINT32_MAX);
	if (id < 0 || !json_object_object_get_ex(root, "sources", &arr) ||
	    !json_object_is_type(arr, json_type_array))
		return -EPROTO;
	r->filter_id = (__u32)id;
	if (json_object_object_get_ex(root, "artifact", &art)) {
		const char *p = get_string(art, "path"), *h = get_string(art, "sha256");

		if (!p || !*p || !h || strlen(h) != 64 ||
		    bg_unhex(h, sizeof(r->artifact_sha), r->artifact_sha))
			return -EPROTO;
		r->artifact = strdup(p);
		if (!r->artifact)
			return -ENOMEM;
	}
	n = json_object_array_length(arr);
	if (n > INT_MAX)
		return -EPROTO;
	r->src = n ? calloc(n, sizeof(*r->src)) : NULL;
	if (n && !r->src)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		int ret = source_of(json_object_array_get_idx(arr, i),
				    &r->src[r->n]);

		if (ret < 0)
			return ret;
		if (ret == 0)
			r->n++;
	}
	return 0;
}

int bg_record_read(__u32 filter_id, struct bg_record *r)
{
	char path[PATH_MAX], *buf = NULL;
	struct json_object *root;
	size_t len = 0;
	int err;

	memset(r, 0, sizeof(*r));
	bg_record_id_path(path, sizeof(path), filter_id);
	err = read_file(path, &buf, &len);
	if (err)
		return err;
	root = parse(buf, len);
	free(buf);
	if (!root)
		return -EPROTO;
	err = record_of(root, r);
	json_object_put(root);
	/* named after one filter, about another: not to be trusted */
	if (!err && r->filter_id != filter_id)
		err = -EPROTO;
	if (err)
		bg_record_free(r);
	return err;
}

void bg_record_free(struct bg_record *r)
{
	int i;

	for (i = 0; i < r->n; i++)
		free(r->src[i].path);
	free(r->src);
	free(r->artifact);
	memset(r, 0, sizeof(*r));
}
