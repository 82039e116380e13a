#!/bin/sh
# Machine-checked rules: clang-format clean, clang-tidy clean, no banned calls, no secrets in logs;
# it also reports how many functions run over 100 lines.
set -eu
cd "$(dirname "$0")/.."

FILES=$(git ls-files 'pkg/*.c' 'pkg/*.h' 'cmd/*.c' 'cmd/*.h' 'tests/*.c' 'bench/*.c' 'tests/*.h')
fail=0

echo "lint: clang-format"
if ! clang-format --dry-run --Werror $FILES; then
	echo "lint: clang-format: run 'clang-format -i' on the files above" >&2
	fail=1
fi

echo "lint: banned calls"
if grep -nE '\b(sprintf|vsprintf|strcpy|strcat|strncat|strncpy|atoi|atol|atof|strtok|gets)[[:space:]]*\(' $FILES; then
	echo "lint: banned call (use snprintf, gc_strlcpy, gc_buf, gc_parse_*)" >&2
	fail=1
fi

echo "lint: no printing or exiting in pkg/"
if grep -nE '\b(printf|fprintf|puts|perror|exit|abort)[[:space:]]*\(' $(git ls-files 'pkg/*.c'); then
	echo "lint: libraries never print or exit; return an error" >&2
	fail=1
fi

# Programs log (pkg/ never does): every log call's arguments are checked for a secret. A value whose
# name says token, bearer, password, secret, credential, authorization or private key must not
# reach gc_log, cli_error/cli_warn or a printf to a stream; its file's path may (`token_file`).
# String literals are not arguments (a message may say "token"). The checker is first run on a
# sample it must reject, so it cannot pass by matching nothing.
SECRETS_PY=$(
	cat <<'PY'
import re, sys

LOG = re.compile(r"\b(gc_log|cli_error|cli_warn|cli_info|fprintf|printf|dprintf|vfprintf|"
                 r"snprintf)\s*\(")
SECRET = re.compile(r"(?i)(^|_)(token|bearer|passw(or)?d|secret|credentials?|authorization|"
                    r"private_?key|key_?data)s?($|_)")
HARMLESS = re.compile(r"(?i)_(file|path|dir|len|size|n|count|bytes|set|ok|kind|source|src|"
                      r"type|flag|mode|name|expiry|ttl|cache\w*|hits?|miss(es)?|reviews?)$")
# Comments and literals in one pass, left to right, so neither can hide or fake the other.
NOISE = re.compile(r"/\*.*?\*/|//[^\n]*|" + r'"(\\.|[^"\\\n])*"' + r"|'(\\.|[^'\\\n])*'",
                   re.S)


def calls(text):
    for m in LOG.finditer(text):
        depth, i = 1, m.end()
        while i < len(text) and depth:
            depth += {"(": 1, ")": -1}.get(text[i], 0)
            i += 1
        args = text[m.end():i - 1]
        # snprintf counts when it writes an error message: those end up in the program's logs.
        if m.group(1) != "snprintf" or re.match(r"\s*err\w*\s*,", args):
            yield m.start(), args


def check(path, text):
    bad = []
    # A literal becomes "" (a "(" in a message must not open a call), a comment blanks.
    code = NOISE.sub(lambda m: '""' if m.group(0)[0] in "\"'" else
                     re.sub(r"[^\n]", " ", m.group(0)), text)
    for start, args in calls(code):
        for m in re.finditer(r"[A-Za-z_]\w*", args):
            ident, before, after = m.group(0), args[:m.start()].rstrip(), args[m.end():].lstrip()
            # Tested, not printed: `key || other ? "a" : "b"`, `!key`, `key == NULL`.
            if before.endswith("!") or re.match(r"(\|\||&&|\?|[!=]=)", after):
                continue
            if SECRET.search(ident) and not HARMLESS.search(ident):
                line = code.count("\n", 0, start) + 1
                bad.append("%s:%d: %s logged" % (path, line, ident))
    return bad


if sys.argv[1] == "--self-test":
    sample = 'gc_log(GC_LOG_INFO, "auth", "with",\n        c->bearer_token, NULL);\n'
    sample += 'cli_warn("token: %s", r->token);\n'
    sample += 'snprintf(err, errlen, "%s", cfg->password);\n'
    ok = 'cli_error("--token-file %s: cannot (\\"read\\")", r->token_file);\n'
    ok += 'snprintf(line, sizeof(line), "Authorization: Bearer %s", bearer);\n'
    ok += 'snprintf(err, errlen, "%s", c->key_data || c->key_file ? "a" : "b");\n'
    got = check("sample.c", sample + ok)
    sys.exit(0 if len(got) == 3 and "token_file" not in " ".join(got) else 1)
bad = []
for path in sys.argv[1:]:
    with open(path, encoding="utf-8") as f:
        bad += check(path, f.read())
print("\n".join(bad), end="\n" if bad else "")
sys.exit(1 if bad else 0)
PY
)
echo "lint: no secrets in logs"
if ! python3 -c "$SECRETS_PY" --self-test; then
	echo "lint: the secrets check did not catch its own sample: it is broken" >&2
	fail=1
elif ! python3 -c "$SECRETS_PY" $(git ls-files 'cmd/*.c' 'pkg/*.c'); then
	echo "lint: a secret may reach a log line: log that it is set, never its value" >&2
	fail=1
fi

# Long functions read badly; the count is reported so it can only be watched going down.
echo "lint: functions over 100 lines"
LONG=$(awk '
	FNR == 1 { start = 0 }
	/^[A-Za-z_]/ && !/^\}/ { if (!start) sig = $0 }
	/^\{[[:space:]]*$/ { start = FNR; name = sig }
	/^\}/ && start { n = FNR - start - 1; if (n > 100) printf "%s:%d: %d lines: %s\n", FILENAME, start, n, name; start = 0 }
' $(git ls-files 'pkg/*.c' 'cmd/*.c'))
if [ -n "$LONG" ]; then
	printf '%s\n' "$LONG" | sed 's/^/  /'
	echo "lint: $(printf '%s\n' "$LONG" | wc -l) functions over 100 lines (split where it reads better)"
else
	echo "lint: 0 functions over 100 lines"
fi

echo "lint: clang-tidy"
BUILD=${LINT_BUILD:-build-tidy}
cmake -S . -B "$BUILD" -DCMAKE_C_COMPILER=clang -DCMAKE_EXPORT_COMPILE_COMMANDS=ON >/dev/null
TIDY_SRC=$(git ls-files 'pkg/*.c' 'cmd/*.c')
# shellcheck disable=SC2086
if ! printf '%s\n' $TIDY_SRC | xargs -P "$(nproc)" -n 4 clang-tidy -p "$BUILD" --quiet \
	>"$BUILD/tidy.log" 2>&1; then
	grep -E 'warning:|error:' "$BUILD/tidy.log" >&2 || cat "$BUILD/tidy.log" >&2
	fail=1
fi

[ "$fail" -eq 0 ] && echo "lint: clean"
exit "$fail"
