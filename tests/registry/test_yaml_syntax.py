"""A broken registry file is one finding at the line and column of the mistake, in the parser's
words, with a hint for the slips people make: a tab in the indentation, a quote never closed,
a key indented wrongly, a value holding ': '.

A small corpus, parsed in-process as every registry file is (`parse_text`); the finding is
asserted as `check` prints it. tests/registry/invalid/malformed-* run the same through `check`.
"""

from __future__ import annotations

import pytest

from profilegen.errors import FindingSink
from profilegen.registry.load import parse_text

TAB = "found a tab character in the indentation (YAML indents with spaces only: replace the tab with spaces)"
DOUBLE = 'close the value with " (a " inside it is written \\")'
SINGLE = "close the value with ' (a ' inside it is written '')"
DEEPER = "so YAML reads it as part of that value: indent it like the keys beside it"
QUOTE_IT = "quote the value: it holds ': ', which YAML reads as a new key"
KEY = "indent this key exactly like the other keys of its mapping"

CORPUS = [
    # A tab for indentation: the scanner's words differ by where the tab is.
    (
        "tab-under-a-key",
        "id: x\nenv:\n\tA: 1\n",
        f"3: error: [schema] malformed YAML at column 1: {TAB}",
    ),
    (
        "tab-among-keys",
        "envelope:\n  tp: 2\n\tmax: 3\n",
        f"3: error: [schema] malformed YAML at column 1: {TAB}",
    ),
    (
        "tab-after-spaces",
        "envelope:\n  tp: 2\n  \tmax: 3\n",
        f"3: error: [schema] malformed YAML at column 3: {TAB}",
    ),
    (
        "tab-before-an-item",
        "caveats:\n\t- one\n",
        f"2: error: [schema] malformed YAML at column 1: {TAB}",
    ),
    # A quote never closed: reported where it opens, not at the end of the file.
    (
        "unclosed-double-quote",
        'id: x\ntitle: "Tiny\nport: 8200\n',
        '2: error: [schema] malformed YAML at column 8: found unexpected end of stream (the " '
        f"that opens this value is never closed: {DOUBLE})",
    ),
    (
        "unclosed-single-quote",
        "id: x\ntitle: 'Tiny\nport: 8200\n",
        "2: error: [schema] malformed YAML at column 8: found unexpected end of stream (the ' "
        f"that opens this value is never closed: {SINGLE})",
    ),
    (
        "unclosed-quote-in-a-list",
        'siblings: ["a, b]\nport: 8200\n',
        '1: error: [schema] malformed YAML at column 12: found unexpected end of stream (the " '
        f"that opens this value is never closed: {DOUBLE})",
    ),
    (
        "text-after-the-closing-quote",
        'title: "Tiny" 7B\n',
        "1: error: [schema] malformed YAML at column 15: did not find expected key (text follows "
        "the closing quote: put the whole value inside the quotes)",
    ),
    (
        "backslash-in-double-quotes",
        'host: "C:\\models"\n',
        "1: error: [schema] malformed YAML at column 10: found unknown escape character (a \\ in "
        "double quotes starts an escape: write \\\\, or quote the value with ')",
    ),
    # Indentation.
    (
        "key-indented-deeper",
        "envelope:\n  tp: 2\n    max_model_len: 4096\n",
        "3: error: [schema] malformed YAML at column 18: mapping values are not allowed in this "
        f"context (this line is indented deeper than line 2, {DEEPER})",
    ),
    (
        "key-indented-deeper-past-a-comment",
        "envelope:\n  tp: 2\n  # the context\n    max_model_len: 4096\n",
        # The comment ends the value above: the parser meets a key it cannot place.
        f"4: error: [schema] malformed YAML at column 5: did not find expected key ({KEY})",
    ),
    (
        "key-between-two-levels",
        "envelope:\n    tp: 2\n  max_model_len: 4096\n",
        f"3: error: [schema] malformed YAML at column 3: did not find expected key ({KEY})",
    ),
    (
        "key-one-space-short",
        "envelope:\n  tp: 2\n max_model_len: 4096\n",
        f"3: error: [schema] malformed YAML at column 2: did not find expected key ({KEY})",
    ),
    (
        "key-at-the-items-of-a-list",
        "caveats:\n  - one\n  title: x\n",
        "3: error: [schema] malformed YAML at column 3: did not find expected '-' indicator (this "
        "key sits at the indentation of a list's items: start it with '- ' to make it an item, "
        "or indent it like the key that holds the list)",
    ),
    (
        "no-space-after-the-colon",
        "envelope:\n  tp:2\n  max_model_len: 4096\n",
        "3: error: [schema] malformed YAML at column 16: mapping values are not allowed in this "
        "context (line 2 has no ': ' after its key, so YAML reads this line as more of it: a key "
        "needs a space after its colon)",
    ),
    (
        "colon-in-a-value",
        "title: Tiny: the small one\n",
        f"1: error: [schema] malformed YAML at column 12: mapping values are not allowed in this "
        f"context ({QUOTE_IT})",
    ),
    # Flow collections.
    (
        "unclosed-bracket",
        "siblings: [a, b\nport: 8200\n",
        "2: error: [schema] malformed YAML at column 5: did not find expected ',' or ']' (the [ at "
        "line 1 column 11 needs ',' between its items and a closing ])",
    ),
    (
        "unclosed-bracket-at-the-end",
        "port: 8200\nsiblings: [a, b\n",
        "2: error: [schema] malformed YAML at column 11: did not find expected ',' or ']' (the [ "
        "at line 2 column 11 needs ',' between its items and a closing ])",
    ),
    (
        "unclosed-brace",
        "sampler: {temperature: 0.6\nport: 8200\n",
        "2: error: [schema] malformed YAML at column 5: did not find expected ',' or '}' (the { at "
        "line 1 column 10 needs ',' between its items and a closing })",
    ),
    # A character YAML cannot carry: its column too.
    (
        "control-character",
        "id: x\nname: bell\x07\n",
        "2: error: [schema] malformed YAML at column 11: character #x07: control characters are "
        "not allowed",
    ),
]


@pytest.mark.parametrize(("text", "expected"), [c[1:] for c in CORPUS], ids=[c[0] for c in CORPUS])
def test_a_syntax_error_is_located_and_explained(text: str, expected: str) -> None:
    sink = FindingSink()
    assert parse_text(text, "registry/profiles/x.yaml", sink) is None
    assert [f.render() for f in sink.findings] == [f"registry/profiles/x.yaml:{expected}"]


def test_the_corpus_is_named_uniquely() -> None:
    names = [c[0] for c in CORPUS]
    assert len(names) == len(set(names))
