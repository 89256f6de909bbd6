#include "json.h"

#include <stdlib.h>
#include <string.h>

static const char *ws(const char *p, const char *end) {
    while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')) p++;
    return p;
}

static int hexval(char h) {
    if (h >= '0' && h <= '9') return h - '0';
    if (h >= 'a' && h <= 'f') return h - 'a' + 10;
    if (h >= 'A' && h <= 'F') return h - 'A' + 10;
    return -1;
}

// Parses the string at p (its opening quote); decodes into *out when out is not NULL.
// Returns the position after the closing quote, or NULL.
static const char *str(const char *p, const char *end, char **out) {
    if (p >= end || *p != '"') return NULL;
    char *buf = out ? malloc((size_t)(end - p) + 1) : NULL;
    size_t n = 0;
    for (p++; p < end && *p != '"'; p++) {
        char c = *p;
        if ((unsigned char)c < 0x20) goto bad;
        if (c == '\\') {
            if (++p >= end) goto bad;
            switch (*p) {
            case '"': case '\\': case '/': c = *p; break;
            case 'n': c = '\n'; break;
            case 't': c = '\t'; break;
            case 'r': c = '\r'; break;
            case 'b': c = '\b'; break;
            case 'f': c = '\f'; break;
            case 'u': {
                int v = 0;
                for (int i = 0; i < 4; i++) {
                    int h = ++p < end ? hexval(*p) : -1;
                    if (h < 0) goto bad;
                    v = v * 16 + h;
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

// Skips one value of any type.
static const char *skip(const char *p, const char *end) {
    p = ws(p, end);
    if (p >= end) return NULL;
    if (*p == '"') return str(p, end, NULL);
    if (*p == '{' || *p == '[') {
        int depth = 0;
        while (p < end) {
            if (*p == '"') {
                if (!(p = str(p, end, NULL))) return NULL;
                continue;
            }
            if (*p == '{' || *p == '[') depth++;
            if ((*p == '}' || *p == ']') && --depth == 0) return p + 1;
            p++;
        }
        return NULL;
    }
    const char *start = p;
    while (p < end && *p != ',' && *p != '}' && *p != ']' && *p != ' ' && *p != '\n') p++;
    return p > start ? p : NULL;
}

int json_member(const char *json, size_t len, const char *key, const char **value, const char **vend) {
    const char *p = ws(json, json + len), *end = json + len;
    if (p >= end || *p++ != '{') return JSON_BAD;
    int found = JSON_ABSENT;
    p = ws(p, end);
    if (p < end && *p == '}') return ws(p + 1, end) == end ? found : JSON_BAD;
    for (;;) {
        char *name = NULL;
        p = str(ws(p, end), end, &name);
        if (!p) return JSON_BAD;
        p = ws(p, end);
        if (p >= end || *p++ != ':') {
            free(name);
            return JSON_BAD;
        }
        const char *v = ws(p, end);
        p = skip(v, end);
        if (!p) {
            free(name);
            return JSON_BAD;
        }
        if (strcmp(name, key) == 0) {
            *value = v;
            *vend = p;
            found = JSON_OK;
        }
        free(name);
        p = ws(p, end);
        if (p < end && *p == ',') {
            p++;
            continue;
        }
        if (p < end && *p == '}') return ws(p + 1, end) == end ? found : JSON_BAD;
        return JSON_BAD;
    }
}

int json_string(const char *value, const char *end, char **out) {
    if (value >= end || *value != '"') return JSON_WRONG_TYPE;
    return str(value, end, out) ? JSON_OK : JSON_BAD;
}

int json_string_array(const char *value, const char *end, char ***out, size_t *count) {
    const char *p = ws(value, end);
    if (p >= end || *p++ != '[') return JSON_WRONG_TYPE;
    char **items = NULL;
    size_t n = 0;
    p = ws(p, end);
    if (p < end && *p == ']') goto done;
    for (;;) {
        p = ws(p, end);
        if (p >= end || *p != '"') goto wrong;
        char *s = NULL;
        if (!(p = str(p, end, &s))) goto wrong;
        items = realloc(items, (n + 1) * sizeof *items);
        items[n++] = s;
        p = ws(p, end);
        if (p < end && *p == ',') {
            p++;
            continue;
        }
        if (p < end && *p == ']') break;
        goto wrong;
    }
done:
    *out = items;
    *count = n;
    return JSON_OK;
wrong:
    for (size_t i = 0; i < n; i++) free(items[i]);
    free(items);
    return JSON_WRONG_TYPE;
}
