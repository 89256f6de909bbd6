// checksum: a corral tool plugin in C that computes SHA-256 or CRC-32 checksums of workspace
// files (given one by one or as folders searched recursively), in sha256sum's format.
// Built by ../build.sh: corral plugin c-bindings -> clang (wasm32-wasi) -> corral plugin componentize.

#include "digest.h"
#include "json.h"
#include "tool_plugin.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define TOOL "checksum"
#define DEFAULT_MAX_FILES 1000
#define MAX_OUTPUT (256 * 1024)

// ---- results ---------------------------------------------------------------------------

static bool fail(corral_plugin_types_tool_error_t *err, corral_plugin_types_error_kind_t kind, const char *message,
                 const char *hint) {
    err->kind = kind;
    tool_plugin_string_dup(&err->message, message);
    err->hint.is_some = hint != NULL;
    if (hint) tool_plugin_string_dup(&err->hint.val, hint);
    return false;
}

// A growing output buffer.
typedef struct {
    char *text;
    size_t len, cap;
    bool truncated;
} out_t;

static void out_add(out_t *o, const char *s) {
    size_t n = strlen(s);
    if (o->truncated || o->len + n + 1 > MAX_OUTPUT) {
        o->truncated = true;
        return;
    }
    if (o->len + n + 1 > o->cap) {
        o->cap = (o->len + n + 1) * 2;
        o->text = realloc(o->text, o->cap);
    }
    memcpy(o->text + o->len, s, n + 1);
    o->len += n;
}

// ---- files -----------------------------------------------------------------------------

typedef struct {
    char **paths;
    size_t len;
    bool more;  // stopped at max_files
} files_t;

static void files_add(files_t *f, const char *path, size_t max) {
    if (f->len >= max) {
        f->more = true;
        return;
    }
    f->paths = realloc(f->paths, (f->len + 1) * sizeof *f->paths);
    f->paths[f->len++] = strdup(path);
}

// Adds the regular files under `dir`, skipping hidden entries.
static void walk(const char *dir, files_t *f, size_t max) {
    DIR *d = opendir(dir);
    if (!d) return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL && !f->more) {
        if (e->d_name[0] == '.') continue;
        size_t n = strlen(dir) + strlen(e->d_name) + 2;
        char *child = malloc(n);
        snprintf(child, n, "%s/%s", dir, e->d_name);
        struct stat st;
        if (stat(child, &st) == 0) {
            if (S_ISDIR(st.st_mode)) walk(child, f, max);
            else if (S_ISREG(st.st_mode)) files_add(f, child, max);
        }
        free(child);
    }
    closedir(d);
}

static int by_name(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static char *workspace_root(void) {
    corral_plugin_workspace_list_root_t roots;
    corral_plugin_workspace_roots(&roots);
    char *root = roots.len > 0 ? strndup((const char *)roots.ptr[0].path.ptr, roots.ptr[0].path.len) : strdup("/");
    corral_plugin_workspace_list_root_free(&roots);
    size_t n = strlen(root);
    if (n > 1 && root[n - 1] == '/') root[n - 1] = 0;
    return root;
}

static char *absolute(const char *root, const char *path) {
    if (path[0] == '/') return strdup(path);
    size_t n = strlen(root) + strlen(path) + 2;
    char *full = malloc(n);
    snprintf(full, n, "%s/%s", root, path);
    return full;
}

// The path as the model should see it: relative to the workspace root when inside it.
static const char *shown(const char *root, const char *path) {
    size_t n = strlen(root);
    if (strncmp(path, root, n) == 0 && path[n] == '/') return path + n + 1;
    return path;
}

// Hashes one file; writes the hex digest into hex (65 bytes). 0, or an errno.
static int digest_file(const char *path, bool crc, char hex[65]) {
    FILE *f = fopen(path, "rb");
    if (!f) return errno;
    static uint8_t buf[65536];
    sha256_ctx sha;
    sha256_init(&sha);
    uint32_t c = 0;
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0) {
        if (crc) c = crc32_update(c, buf, n);
        else sha256_update(&sha, buf, n);
    }
    int e = ferror(f) ? (errno ? errno : EIO) : 0;
    fclose(f);
    if (e) return e;
    if (crc) {
        snprintf(hex, 65, "%08x", c);
    } else {
        uint8_t d[32];
        sha256_final(&sha, d);
        for (int i = 0; i < 32; i++) snprintf(hex + 2 * i, 3, "%02x", d[i]);
    }
    return 0;
}

// ---- the exports -----------------------------------------------------------------------

void exports_corral_plugin_tool_describe(exports_corral_plugin_tool_list_tool_spec_t *ret) {
    ret->len = 1;
    ret->ptr = calloc(1, sizeof(*ret->ptr));
    corral_plugin_types_tool_spec_t *s = &ret->ptr[0];
    tool_plugin_string_dup(&s->name, TOOL);
    tool_plugin_string_dup(&s->description,
                           "Computes SHA-256 (default) or CRC-32 checksums of workspace files, one line per file "
                           "in sha256sum's format. Give files or folders; folders are searched recursively and "
                           "hidden entries are skipped. Use it to tell whether files are identical or to check a "
                           "file against a published hash.");
    tool_plugin_string_dup(
        &s->input_schema,
        "{\"type\":\"object\",\"properties\":{"
        "\"paths\":{\"type\":\"array\",\"items\":{\"type\":\"string\"},\"minItems\":1,"
        "\"description\":\"Files or folders, relative to the workspace root\"},"
        "\"algorithm\":{\"type\":\"string\",\"enum\":[\"sha256\",\"crc32\"],\"description\":\"Default sha256\"},"
        "\"max_files\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":10000,\"description\":\"Default 1000\"}},"
        "\"required\":[\"paths\"],\"additionalProperties\":false}");
    s->hints.read_only = true;
    s->hints.destructive = false;
    s->hints.idempotent = true;
    s->hints.open_world = false;
    s->capabilities.len = 0;
    s->capabilities.ptr = NULL;
}

bool exports_corral_plugin_tool_invoke(tool_plugin_string_t *name, tool_plugin_string_t *args_json,
                                       exports_corral_plugin_tool_tool_output_t *ret,
                                       exports_corral_plugin_tool_tool_error_t *err) {
    char msg[1024];
    if (name->len != strlen(TOOL) || memcmp(name->ptr, TOOL, name->len) != 0) {
        snprintf(msg, sizeof msg, "this plugin has no tool named '%.*s'", (int)name->len, (const char *)name->ptr);
        return fail(err, CORRAL_PLUGIN_TYPES_ERROR_KIND_NOT_FOUND, msg, NULL);
    }
    const char *json = (const char *)args_json->ptr, *v, *vend;
    size_t len = args_json->len;

    bool crc = false;
    int r = json_member(json, len, "algorithm", &v, &vend);
    if (r == JSON_BAD) return fail(err, CORRAL_PLUGIN_TYPES_ERROR_KIND_INVALID_ARGS, "the arguments are not a JSON object", NULL);
    if (r == JSON_OK) {
        char *alg = NULL;
        if (json_string(v, vend, &alg) != JSON_OK || (strcmp(alg, "sha256") != 0 && strcmp(alg, "crc32") != 0)) {
            free(alg);
            return fail(err, CORRAL_PLUGIN_TYPES_ERROR_KIND_INVALID_ARGS, "'algorithm' must be \"sha256\" or \"crc32\"", NULL);
        }
        crc = strcmp(alg, "crc32") == 0;
        free(alg);
    }
    size_t max = DEFAULT_MAX_FILES;
    if (json_member(json, len, "max_files", &v, &vend) == JSON_OK) {
        char *endp;
        long n = strtol(v, &endp, 10);
        if (endp != vend || n < 1 || n > 10000) {
            return fail(err, CORRAL_PLUGIN_TYPES_ERROR_KIND_INVALID_ARGS, "'max_files' must be an integer from 1 to 10000", NULL);
        }
        max = (size_t)n;
    }
    char **inputs = NULL;
    size_t count = 0;
    if (json_member(json, len, "paths", &v, &vend) != JSON_OK || json_string_array(v, vend, &inputs, &count) != JSON_OK ||
        count == 0) {
        return fail(err, CORRAL_PLUGIN_TYPES_ERROR_KIND_INVALID_ARGS, "'paths' must be a non-empty list of strings",
                    "for example {\"paths\": [\"dist/app.tar.gz\"]} or {\"paths\": [\"src\"]}");
    }

    char *root = workspace_root();
    files_t files = {0};
    bool ok = true;
    for (size_t i = 0; i < count && ok; i++) {
        char *full = absolute(root, inputs[i]);
        struct stat st;
        if (stat(full, &st) != 0) {
            int e = errno;
            if (e == ENOENT) {
                snprintf(msg, sizeof msg, "'%s' does not exist", inputs[i]);
                ok = fail(err, CORRAL_PLUGIN_TYPES_ERROR_KIND_NOT_FOUND, msg,
                          "paths are relative to the workspace root; list_files shows what is there");
            } else if (e == EPERM || e == EACCES || e == ENOTCAPABLE) {
                snprintf(msg, sizeof msg, "'%s' is outside the workspace", inputs[i]);
                ok = fail(err, CORRAL_PLUGIN_TYPES_ERROR_KIND_PERMISSION_DENIED, msg, NULL);
            } else {
                snprintf(msg, sizeof msg, "cannot read '%s': %s", inputs[i], strerror(e));
                ok = fail(err, CORRAL_PLUGIN_TYPES_ERROR_KIND_IO, msg, NULL);
            }
        } else if (S_ISDIR(st.st_mode)) {
            size_t before = files.len;
            walk(full, &files, max);
            qsort(files.paths + before, files.len - before, sizeof *files.paths, by_name);
        } else {
            files_add(&files, full, max);
        }
        free(full);
    }
    for (size_t i = 0; i < count; i++) free(inputs[i]);
    free(inputs);

    out_t out = {0};
    out_add(&out, "");
    for (size_t i = 0; i < files.len && ok; i++) {
        char hex[65];
        int e = digest_file(files.paths[i], crc, hex);
        if (e) snprintf(msg, sizeof msg, "ERROR %s: %s\n", shown(root, files.paths[i]), strerror(e));
        else snprintf(msg, sizeof msg, "%s  %s\n", hex, shown(root, files.paths[i]));
        out_add(&out, msg);
    }
    if (ok && files.len == 0) out_add(&out, "No files found.\n");
    if (ok && files.more) {
        snprintf(msg, sizeof msg, "(stopped after %zu files: raise max_files for more)\n", max);
        out_add(&out, msg);
    }
    for (size_t i = 0; i < files.len; i++) free(files.paths[i]);
    free(files.paths);
    free(root);
    if (!ok) {
        free(out.text);
        return false;
    }
    ret->truncated = out.truncated;
    ret->content.len = 1;
    ret->content.ptr = calloc(1, sizeof(*ret->content.ptr));
    ret->content.ptr[0].tag = CORRAL_PLUGIN_TYPES_CONTENT_PART_TEXT;
    // The output buffer becomes the string; the bindings free it after the call.
    ret->content.ptr[0].val.text.ptr = (uint8_t *)out.text;
    ret->content.ptr[0].val.text.len = out.len;
    return true;
}
