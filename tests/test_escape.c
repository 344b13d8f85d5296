/* Escaping of error text: control bytes, ESC and bytes from 0x7f up are shown as
 * escapes, printable text is untouched, a second pass changes nothing, and a
 * short buffer never ends in half an escape. */
#include "escape.h"
#include "output_capture.h"
#include "unit.h"

#define TEXT_SIZE 256

static void escapes_control_bytes(void)
{
    char out[TEXT_SIZE];
    escape_text(out, sizeof out, "a\nb\rc\td\x1b[31me\x7f\x01\xc3\xa9");
    CHECK(strcmp(out, "a\\nb\\rc\\td\\x1b[31me\\x7f\\x01\\xc3\\xa9") == 0);
}

static void keeps_printable_text(void)
{
    const char *text = "--size 3x4: a path/with spaces, 'quotes' and \\backslash~";
    char out[TEXT_SIZE];
    CHECK(strcmp(escape_text(out, sizeof out, text), text) == 0);
}

static void escaping_twice_changes_nothing(void)
{
    char once[TEXT_SIZE], twice[TEXT_SIZE];
    escape_text(once, sizeof once, "line\none\x1b");
    escape_text(twice, sizeof twice, once);
    CHECK(strcmp(once, twice) == 0);
}

static void stops_on_a_whole_escape(void)
{
    char out[6];
    escape_text(out, sizeof out, "ab\x1b");
    CHECK(strcmp(out, "ab") == 0); /* "\x1b" needs 4 more bytes: left out whole */
    escape_text(out, sizeof out, "abcdefgh");
    CHECK(strcmp(out, "abcde") == 0);
    escape_text(out, 1, "abc");
    CHECK(out[0] == '\0');
}

/* print_error writes exactly one line to stderr, whatever its arguments hold. */
static void print_error_is_one_line(void)
{
    struct output_capture c;
    output_capture_begin(&c, stderr);
    print_error("--size %s: expected HxW", "3\n4\x1b[2J");
    CHECK(strcmp(output_capture_end(&c), "error: --size 3\\n4\\x1b[2J: expected HxW\n") == 0);
}

static const struct unit_case cases[] = {
    {"escapes_control_bytes", escapes_control_bytes},
    {"keeps_printable_text", keeps_printable_text},
    {"escaping_twice_changes_nothing", escaping_twice_changes_nothing},
    {"stops_on_a_whole_escape", stops_on_a_whole_escape},
    {"print_error_is_one_line", print_error_is_one_line},
};

UNIT_MAIN(cases)
