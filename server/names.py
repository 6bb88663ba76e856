"""Display names: the one rule for races and the daily challenge, and the identity of a name.

:func:`name_problem` says why a name is refused (or ``None``): 1..24
characters, no space at either end, no control characters, no spaces but
the plain one (nor a character that draws as a blank without being a
space: the Hangul fillers, the blank Braille pattern), no invisible
formatting characters (a zero width joiner is fine inside an emoji
sequence such as "woman technologist", where it joins two pictures into
one), no private-use or unassigned code points, something visible (not
only characters that draw as nothing), not "." or ".." (a link to the
player's replay would lose it), and the letters and digits of one
script (ASCII digits, punctuation and emoji go with any): a Cyrillic "а"
or a Devanagari zero among Latin letters, or an invisible character, would
make a name look like another player's.

:func:`name_key` is a name's identity: names with one key look alike (by
Unicode's confusable detection, the UTS #39 skeleton that ICU's spoof
checker computes from Unicode's confusables.txt), and only the first to
join a match (or claim the name for the daily challenge) gets it.

One name: "Ann", "ANN" and full-width "Ａｎｎ"; "BiII" and "Bill"; "B0b" and
"BOB"; "Sarn" and "Sam" (confusables.txt draws "m" as "rn"); "C1aire" and
"Claire"; "alice" and "ALICE"; "Kai" and "Kal" (in capitals "KAI" looks
like "Kal"); Greek "ΑΝΝ" and "ANN"; "ß" and "ss"; a name with and without
an invisible variation selector. Two names: "vv" and "w", "cl" and "d" (no
entry in confusables.txt), "José" and "Jose" (an accent is not dropped),
"5am" and "Sam", Latin "Ivan" and Cyrillic "Иван" (the standard's
prototypes differ there), "Ann" and "Anna"; and the few names in small
letters whose capitals have other prototypes (Cyrillic "Иван" and "ИВАН",
see :func:`name_key`). The skeleton comes from the confusables.txt of the
ICU that the ``pyicu-wheels`` wheel bundles (PyICU's module ``icu``); a
newer Unicode version can move a few names into or out of one key.
"""

from __future__ import annotations

import re
import unicodedata

import icu

from protocol.messages import MAX_NAME

ZWJ = "\u200d"
"""ZERO WIDTH JOINER: allowed between two emoji (an emoji ZWJ sequence), refused elsewhere."""

_INVISIBLE = re.compile("[\u034f\u115f\u1160\u17b4\u17b5\u180b-\u180f\u3164\ufe00-\ufe0f\uffa0"
                        "\U000e0100-\U000e01ef\u200d]")
"""Characters that draw as nothing and that a valid name may hold, dropped from its key: default-ignorable
code points (Unicode's DerivedCoreProperties) that are not format or control characters (variation
selectors, Hangul fillers, ...), and the zero width joiner of an emoji sequence (where the sequence is not
drawn as one picture, it shows as its parts)."""

_BLANKS = frozenset("\u115f\u1160\u2800\u3164\uffa0")
"""Characters that draw as a blank but are no space (Unicode's Lo and So: the Hangul fillers, BRAILLE PATTERN
BLANK): "Ann\u2800Lee" would look like "Ann Lee" with another key, "Ann\u2800" like "Ann"."""

_EMOJI_MODIFIERS = frozenset({"\ufe0f", *map(chr, range(0x1F3FB, 0x1F400))})
"""Variation selector 16 (emoji presentation) and the skin tone modifiers: they may stand between an emoji and
the joiner that follows it."""

_HAN = frozenset({"CJK", "HIRAGANA", "KATAKANA", "KATAKANA-HIRAGANA", "HANGUL", "BOPOMOFO"})
"""Scripts written together (Japanese, Chinese, Korean names): one script for :func:`scripts_of`."""


_ARABIC_DIGITS = frozenset({"ARABIC-INDIC", "EXTENDED"})
"""First words of the names of the digits Arabic-script names use (ARABIC-INDIC DIGIT ONE, EXTENDED
ARABIC-INDIC DIGIT ONE): the script ``ARABIC`` for :func:`scripts_of`."""


def scripts_of(name: str) -> set[str]:
    """The scripts of the letters and the non-ASCII digits of ``name`` after NFKC (the first word of each one's
    Unicode name: ``{"LATIN"}``, ``{"CYRILLIC", "LATIN"}``, ``{"DEVANAGARI", "LATIN"}`` for "B\u0966b"; the Han,
    kana, Hangul and Bopomofo letters count as one, ``CJK``). ASCII digits (and the forms NFKC makes them)
    belong to no script: a native digit does, since many look like a Latin letter (most native zeros are a
    small circle, an "o")."""
    scripts = set()
    for c in unicodedata.normalize("NFKC", name):
        category = unicodedata.category(c)
        if category in ("Lu", "Ll", "Lt", "Lo") or category == "Nd" and not "0" <= c <= "9":
            script = unicodedata.name(c, "?").split(" ", 1)[0]
            scripts.add("CJK" if script in _HAN else "ARABIC" if script in _ARABIC_DIGITS else script)
    return scripts


def _is_emoji(c: str) -> bool:
    """A pictograph an emoji ZWJ sequence joins (Unicode's ``So``, other symbols: 👩, 💻, 🏳, ❤, ♀ ...)."""
    return unicodedata.category(c) == "So"


def _joins_emoji(name: str, i: int) -> bool:
    """Whether the zero width joiner at ``name[i]`` stands between two emoji (skin tones and VS16 may follow
    the first)."""
    before = i - 1
    while before >= 0 and name[before] in _EMOJI_MODIFIERS:
        before -= 1
    return before >= 0 and _is_emoji(name[before]) and i + 1 < len(name) and _is_emoji(name[i + 1])


def _named(c: str) -> str:
    """``U+200B (ZERO WIDTH SPACE)``."""
    label = unicodedata.name(c, "")
    return f"U+{ord(c):04X}" + (f" ({label})" if label else "")


def name_problem(name: str, longest: int = MAX_NAME) -> str | None:
    """Why ``name`` cannot be a display name (a sentence naming the character or scripts at fault), or ``None``
    when it can. The rule is in the module docstring; races and the daily challenge both use it. ``longest``:
    the most characters (a group's name, under the same rule, may be longer than a player's)."""
    if not 0 < len(name) <= longest:
        return f"a display name is 1..{longest} characters, not {len(name)}"
    for i, c in enumerate(name):
        category = unicodedata.category(c)
        if category == "Cc":
            return f"a display name cannot hold a control character ({_named(c)})"
        if category == "Cf" and not (c == ZWJ and _joins_emoji(name, i)):
            where = " outside an emoji sequence" if c == ZWJ else ""
            return f"a display name cannot hold {_named(c)}{where}: it is an invisible formatting character"
        if category == "Co":
            return f"a display name cannot hold a private-use character ({_named(c)})"
        if category in ("Cn", "Cs"):
            return f"a display name cannot hold {_named(c)}: it is not an assigned character"
        if category in ("Zl", "Zp") or category == "Zs" and c != " ":
            return f"a display name cannot hold {_named(c)}: the only space it may hold is the plain space"
        if c in _BLANKS:
            return (f"a display name cannot hold {_named(c)}: it draws as a blank, and the only space it may hold "
                    "is the plain space")
    if name.startswith(" ") or name.endswith(" "):
        return "a display name cannot start or end with a space"
    if name in (".", ".."):
        # A player's replay is /matches/{code}/replays/{name}: browsers and HTTP clients drop a path segment
        # that is "." or ".." (written %2E too) before asking, so such a player's replay could not be opened.
        return f"a display name cannot be {name!r}: a link to the player's replay would lose it"
    if not name_key(name):  # variation selectors, a combining grapheme joiner ... and nothing else
        return "a display name must show something: this one holds only characters that draw as nothing"
    scripts = scripts_of(name)
    if len(scripts) > 1:
        return (f"a display name's letters and digits are of one script, not {' and '.join(sorted(scripts))}: a "
                "letter or digit of another script can make a name look like someone else's")
    return None


def valid_name(name: str) -> bool:
    """True when :func:`name_problem` finds nothing wrong with ``name``."""
    return name_problem(name) is None


_SPOOF = icu.SpoofChecker()
"""ICU's spoof checker (UTS #39, Unicode Security Mechanisms); only its skeleton is used."""


def skeleton(text: str) -> str:
    """The UTS #39 skeleton of ``text`` (section 4, "Confusable Detection"): NFD, each character replaced by its
    prototype in confusables.txt, NFD again. Two strings with one skeleton are confusable ("I1l" and "lll",
    "rn" and "m", a Cyrillic "а" and a Latin "a")."""
    return str(_SPOOF.getSkeleton(0, text))


def legacy_name_key(name: str) -> str:
    """The key before names were keyed by skeletons (NFKC_Casefold alone): where a daily name was claimed under
    it, the claim still holds."""
    return unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", _INVISIBLE.sub("", name)).casefold())


def name_key(name: str) -> str:
    """The identity of a display name: the invisible characters a valid name may hold dropped (variation
    selectors, an emoji sequence's joiner ...), NFKC, the UTS #39 :func:`skeleton`, the skeleton of that in
    capitals, then NFKC_Casefold and the skeleton again.

    Skeletons are case-sensitive: capital "I" and "l" share one, small "i" does not. Folding first would part
    "BiII" from "Bill"; folding only after the skeleton parts "ALICE" ("ALlCE") from "alice". Capitals between
    the two skeletons give both one key, and so "Kai" and "Kal" are one name too ("KAI" looks like "Kal").

    Names with one key look alike ("Ann", "ANN", full-width "Ａｎｎ", "é" composed or not, "Ann" with an
    invisible variation selector, an emoji sequence and its parts, "BiII" and "Bill", "B0b" and "BOB",
    "alice" and "ALICE"): in a match the first to join takes the key; in the daily challenge, the first
    claimed. Where confusables.txt gives a small letter and its capital prototypes that look nothing alike
    (Cyrillic "в" a small capital "ʙ", "В" a "B"; Greek "ν" a "v", "Ν" an "N"), a name in small letters and
    the same name in capitals keep two keys ("Иван" and "ИВАН").
    """
    visible = unicodedata.normalize("NFKC", _INVISIBLE.sub("", name))
    capitals = skeleton(unicodedata.normalize("NFKC", skeleton(visible)).upper())
    return skeleton(unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", capitals).casefold()))


__all__ = ["ZWJ", "legacy_name_key", "name_key", "name_problem", "scripts_of", "skeleton", "valid_name"]
