// Just enough JSON for tool arguments: find a member of the top-level object, and decode a
// string or an array of strings. Escapes other than ASCII \u are refused, not mangled.
#ifndef CHECKSUM_JSON_H
#define CHECKSUM_JSON_H

#include <stddef.h>

// Result codes.
enum { JSON_OK = 0, JSON_ABSENT = 1, JSON_BAD = -1, JSON_WRONG_TYPE = -2 };

// Finds member `key` of the object in json[0..len]: *value points at its value.
// JSON_OK, JSON_ABSENT, or JSON_BAD (not an object / malformed).
int json_member(const char *json, size_t len, const char *key, const char **value, const char **end);

// Decodes the string at value (malloc'd into *out). JSON_OK, JSON_WRONG_TYPE or JSON_BAD.
int json_string(const char *value, const char *end, char **out);

// Decodes an array of strings (malloc'd array of malloc'd strings, *count items).
int json_string_array(const char *value, const char *end, char ***out, size_t *count);

#endif
