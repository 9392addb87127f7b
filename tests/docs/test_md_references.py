"""Registry text on a catalogue page is shown as written: a character reference in a title
(`&#x202e;`, `&lt;`) is escaped like its brackets, so the page never holds the hidden
character (a right-to-left override) that the text itself could not carry past `printable`."""

from __future__ import annotations

from profilegen.docs.catalog import md_cell


def test_a_character_reference_is_shown_as_written() -> None:
    assert md_cell("Fast&#x202e;gnp.exe &lt;b&gt; A&amp;B") == (
        r"Fast\&#x202e;gnp.exe \&lt;b\&gt; A\&amp;B"
    )
    assert md_cell("Fast\u202egnp") == "Fast\\\\u202egnp"
