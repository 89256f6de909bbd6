// {{name}}: a corral tool plugin in C. clang builds a WASI preview-1 core module against
// the bindings corral generates (gen/), and `corral plugin componentize` makes it a component.
// corral calls describe once, then invoke for each call, in a fresh sandboxed instance that
// sees the workspace read-only through WASI (plain fopen works inside it).

#include "tool_plugin.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TOOL "{{tool}}"

// ---- results -------------------------------------------------------------------------

static void set_string(tool_plugin_string_t *s, const char *text) { tool_plugin_string_dup(s, text); }

// Fills `err` and returns false, so `return fail(...)` ends invoke with a tool error.
static bool fail(corral_plugin_types_tool_error_t *err, corral_plugin_types_error_kind_t kind,
                 const char *message, const char *hint) {
    err->kind = kind;
    set_string(&err->message, message);
    err->hint.is_some = hint != NULL;
    if (hint) set_string(&err->hint.val, hint);
    return false;
}

// ---- a small JSON reader: one string member of the top-level object ------------------

static const char *skip_ws(const char *p, const char *end) {
    while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')) p++;
    return p;
}

// Parses a JSON string at p (on the opening quote). Writes the decoded text to *out
// (malloc'd, NUL-terminated) when out is not NULL. Returns the position after it, or NULL.
static const char *parse_string(const char *p, const char *end, char **out) {
    if (p >= end || *p != '"') return NULL;
    char *buf = out ? malloc((size_t)(end - p) + 1) : NULL;
    size_t n = 0;
    for (p++; p < end && *p != '"'; p++) {
        char c = *p;
        if ((unsigned char)c < 0x20) goto bad;
        if (c == '\\') {
            if (++p >= end) goto bad;
            switch (*p) {
            case '"': c = '"'; break;
            case '\\': c = '\\'; break;
            case '/': c = '/'; break;
            case 'n': c = '\n'; break;
            case 't': c = '\t'; break;
            case 'r': c = '\r'; break;
            case 'b': c = '\b'; break;
            case 'f': c = '\f'; break;
            case 'u': {
                // ASCII escapes only; anything else is refused rather than mangled.
                unsigned v = 0;
                for (int i = 0; i < 4; i++) {
                    if (++p >= end) goto bad;
                    char h = *p;
                    v = v * 16 + (unsigned)(h >= '0' && h <= '9' ? h - '0' : h >= 'a' && h <= 'f' ? h - 'a' + 10
                                            : h >= 'A' && h <= 'F' ? h - 'A' + 10 : 99);
                }
                if (v == 0 || v > 0x7f) goto bad;
                c = (char)v;
                break;
            }
            default: goto bad;
            }
        }
        if (buf) buf[n++] = c;
    }
    if (p >= end) goto bad;
    if (buf) {
        buf[n] = 0;
        *out = buf;
    }
    return p + 1;
bad:
    free(buf);
    return NULL;
}

// Skips any JSON value (strings, numbers, literals, nested arrays and objects).
static const char *skip_value(const char *p, const char *end) {
    p = skip_ws(p, end);
    if (p >= end) return NULL;
    if (*p == '"') return parse_string(p, end, NULL);
    if (*p == '{' || *p == '[') {
        int depth = 0;
        while (p < end) {
            if (*p == '"') {
                p = parse_string(p, end, NULL);
                if (!p) return NULL;
                continue;
            }
            if (*p == '{' || *p == '[') depth++;
            if (*p == '}' || *p == ']') {
                if (--depth == 0) return p + 1;
            }
            p++;
        }
        return NULL;
    }
    while (p < end && *p != ',' && *p != '}' && *p != ']') p++;
    return p;
}

// Finds member `key` of the object `json`. 1: found a string (*out malloc'd); 0: absent;
// -1: not a JSON object; -2: present but not a string.
static int json_string_member(const char *json, size_t len, const char *key, char **out) {
    const char *p = json, *end = json + len;
    p = skip_ws(p, end);
    if (p >= end || *p++ != '{') return -1;
    int found = 0;
    for (;;) {
        p = skip_ws(p, end);
        if (p < end && *p == '}') return found;
        char *name = NULL;
        p = parse_string(p, end, &name);
        if (!p) return -1;
        p = skip_ws(p, end);
        if (p >= end || *p++ != ':') { free(name); return -1; }
        p = skip_ws(p, end);
        if (strcmp(name, key) == 0) {
            free(name);
            if (p >= end || *p != '"') return -2;
            if (found) free(*out);
            p = parse_string(p, end, out);
            if (!p) return -1;
            found = 1;
        } else {
            free(name);
            p = skip_value(p, end);
            if (!p) return -1;
        }
        p = skip_ws(p, end);
        if (p < end && *p == ',') { p++; continue; }
        if (p < end && *p == '}') return found;
        if (found) free(*out);
        return -1;
    }
}

// ---- the tool --------------------------------------------------------------------------

// Relative paths start at the workspace root: the first root the host reports.
static char *absolute(const char *path) {
    if (path[0] == '/') return strdup(path);
    corral_plugin_workspace_list_root_t roots;
    corral_plugin_workspace_roots(&roots);
    const char *root = "/";
    size_t root_len = 1;
    if (roots.len > 0) {
        root = (const char *)roots.ptr[0].path.ptr;
        root_len = roots.ptr[0].path.len;
    }
    char *full = malloc(root_len + strlen(path) + 2);
    memcpy(full, root, root_len);
    size_t n = root_len;
    if (n == 0 || full[n - 1] != '/') full[n++] = '/';
    strcpy(full + n, path);
    corral_plugin_workspace_list_root_free(&roots);
    return full;
}

void exports_corral_plugin_tool_describe(exports_corral_plugin_tool_list_tool_spec_t *ret) {
    ret->len = 1;
    ret->ptr = calloc(1, sizeof(*ret->ptr));
    corral_plugin_types_tool_spec_t *spec = &ret->ptr[0];
    set_string(&spec->name, TOOL);
    set_string(&spec->description,
               "Counts the lines, words and bytes of a text file in the workspace. "
               "Use it to size a file before reading it.");
    set_string(&spec->input_schema,
               "{\"type\":\"object\",\"properties\":{\"path\":{\"type\":\"string\","
               "\"description\":\"The file, relative to the workspace root or absolute inside it\"}},"
               "\"required\":[\"path\"],\"additionalProperties\":false}");
    spec->hints.read_only = true;
    spec->hints.destructive = false;
    spec->hints.idempotent = true;
    spec->hints.open_world = false;
    // This tool only reads; a tool that writes would list CORRAL_PLUGIN_TYPES_CAPABILITY_WORKSPACE_WRITE.
    spec->capabilities.len = 0;
    spec->capabilities.ptr = NULL;
}

bool exports_corral_plugin_tool_invoke(tool_plugin_string_t *name, tool_plugin_string_t *args_json,
                                       exports_corral_plugin_tool_tool_output_t *ret,
                                       exports_corral_plugin_tool_tool_error_t *err) {
    char msg[512];
    if (name->len != strlen(TOOL) || memcmp(name->ptr, TOOL, name->len) != 0) {
        snprintf(msg, sizeof msg, "this plugin has no tool named '%.*s'", (int)name->len, (const char *)name->ptr);
        return fail(err, CORRAL_PLUGIN_TYPES_ERROR_KIND_NOT_FOUND, msg, NULL);
    }
    char *path = NULL;
    int got = json_string_member((const char *)args_json->ptr, args_json->len, "path", &path);
    if (got < 0) {
        return fail(err, CORRAL_PLUGIN_TYPES_ERROR_KIND_INVALID_ARGS,
                    got == -1 ? "the arguments are not a JSON object" : "'path' must be a string", NULL);
    }
    if (got == 0 || path[0] == 0) {
        free(path);
        return fail(err, CORRAL_PLUGIN_TYPES_ERROR_KIND_INVALID_ARGS, "'path' is required",
                    "pass a file path relative to the workspace root, e.g. {\"path\": \"README.md\"}");
    }
    char *full = absolute(path);
    FILE *f = fopen(full, "rb");
    free(full);
    if (!f) {
        int e = errno;
        bool ok;
        if (e == ENOENT) {
            snprintf(msg, sizeof msg, "'%s' does not exist", path);
            ok = fail(err, CORRAL_PLUGIN_TYPES_ERROR_KIND_NOT_FOUND, msg,
                      "check the path with list_files; paths are relative to the workspace root");
        } else if (e == EPERM || e == EACCES || e == ENOTCAPABLE) {
            snprintf(msg, sizeof msg, "'%s' is outside the workspace", path);
            ok = fail(err, CORRAL_PLUGIN_TYPES_ERROR_KIND_PERMISSION_DENIED, msg,
                      "only files inside the workspace can be read");
        } else {
            snprintf(msg, sizeof msg, "cannot read '%s': %s", path, strerror(e));
            ok = fail(err, CORRAL_PLUGIN_TYPES_ERROR_KIND_IO, msg, NULL);
        }
        free(path);
        return ok;
    }
    unsigned long long lines = 0, words = 0, bytes = 0;
    int in_word = 0, last = -1, c;
    while ((c = getc(f)) != EOF) {
        bytes++;
        if (c == '\n') lines++;
        int space = c == ' ' || (c >= '\t' && c <= '\r');
        if (!space && !in_word) words++;
        in_word = !space;
        last = c;
    }
    int read_error = ferror(f);
    int e = errno;
    fclose(f);
    if (read_error) {
        snprintf(msg, sizeof msg, e == EISDIR ? "'%s' is a directory, not a file" : "cannot read '%s'", path);
        free(path);
        return fail(err, e == EISDIR ? CORRAL_PLUGIN_TYPES_ERROR_KIND_INVALID_ARGS : CORRAL_PLUGIN_TYPES_ERROR_KIND_IO,
                    msg, NULL);
    }
    if (bytes > 0 && last != '\n') lines++;
    snprintf(msg, sizeof msg, "%s: %llu lines, %llu words, %llu bytes", path, lines, words, bytes);
    free(path);
    ret->truncated = false;
    ret->content.len = 1;
    ret->content.ptr = calloc(1, sizeof(*ret->content.ptr));
    ret->content.ptr[0].tag = CORRAL_PLUGIN_TYPES_CONTENT_PART_TEXT;
    set_string(&ret->content.ptr[0].val.text, msg);
    return true;
}
