"""Named byte sets of the regex syntax: `\\p{..}` properties and POSIX `[:name:]` classes.

Regexes match bytes, so a property is the set of bytes whose Latin-1 code point has
it, as Hyperscan computes it without its UTF-8 flag (`\\pL` is 117 bytes). General
categories come from `unicodedata`; in Latin-1 only the scripts Latin and Common
hold code points (MICRO SIGN U+00B5 is Common), every other script name is valid
and empty. POSIX classes are ASCII only.
"""

from __future__ import annotations

import unicodedata

from .regex_ast import ALL_BYTES


def _mask(predicate) -> int:
    return sum(1 << byte for byte in range(256) if predicate(byte))


def _category(byte: int) -> str:
    return unicodedata.category(chr(byte))


_CATEGORIES = ("Cc Cf Cn Co Cs Ll Lm Lo Lt Lu Mc Me Mn Nd Nl No Pc Pd Pe Pf Pi Po Ps "
               "Sc Sk Sm So Zl Zp Zs").split()
_SCRIPTS = (
    "Arabic Armenian Avestan Balinese Bamum Batak Bengali Bopomofo Brahmi Braille "
    "Buginese Buhid Canadian_Aboriginal Carian Cham Cherokee Coptic Cuneiform Cypriot "
    "Cyrillic Deseret Devanagari Egyptian_Hieroglyphs Ethiopic Georgian Glagolitic Gothic "
    "Greek Gujarati Gurmukhi Han Hangul Hanunoo Hebrew Hiragana Imperial_Aramaic Inherited "
    "Inscriptional_Pahlavi Inscriptional_Parthian Javanese Kaithi Kannada Katakana Kayah_Li "
    "Kharoshthi Khmer Lao Lepcha Limbu Linear_B Lisu Lycian Lydian Malayalam Mandaic "
    "Meetei_Mayek Mongolian Myanmar New_Tai_Lue Nko Ogham Ol_Chiki Old_Italic Old_Persian "
    "Old_South_Arabian Old_Turkic Oriya Osmanya Phags_Pa Phoenician Rejang Runic Samaritan "
    "Saurashtra Shavian Sinhala Sundanese Syloti_Nagri Syriac Tagalog Tagbanwa Tai_Le "
    "Tai_Tham Tai_Viet Tamil Telugu Thaana Thai Tibetan Tifinagh Ugaritic Vai Yi").split()


def _property_table() -> dict[str, int]:
    table = {name: _mask(lambda b, n=name: _category(b) == n) for name in _CATEGORIES}
    for major in "CLMNPSZ":
        table[major] = _mask(lambda b, m=major: _category(b)[0] == m)
    table["L&"] = table["Lu"] | table["Ll"] | table["Lt"]
    table["Xan"] = table["L"] | table["N"]
    table["Xwd"] = table["Xan"] | (1 << 0x5F)
    table["Xsp"] = table["Xps"] = table["Z"] | _mask(lambda b: 0x09 <= b <= 0x0D or b == 0x85)
    table["Any"] = ALL_BYTES
    table.update({name: 0 for name in _SCRIPTS})
    table["Latin"] = table["L"] & ~(1 << 0xB5)
    table["Common"] = ALL_BYTES & ~table["Latin"]
    return table


PROPERTIES = _property_table()
SINGLE_LETTER_PROPERTIES = "CLMNPSZ"  # \pL, \PN ...


def _ascii(predicate) -> int:
    return _mask(lambda b: b < 0x80 and predicate(chr(b)))


POSIX_CLASSES = {
    "alnum": _ascii(str.isalnum), "alpha": _ascii(str.isalpha), "ascii": _mask(lambda b: b < 0x80),
    "blank": _ascii(lambda c: c in " \t"), "cntrl": _mask(lambda b: b < 0x20 or b == 0x7F),
    "digit": _ascii(str.isdigit), "graph": _mask(lambda b: 0x21 <= b <= 0x7E),
    "lower": _ascii(str.islower), "print": _mask(lambda b: 0x20 <= b <= 0x7E),
    "punct": _mask(lambda b: 0x21 <= b <= 0x7E and not chr(b).isalnum()),
    "space": _ascii(lambda c: c in " \t\n\r\f\v"), "upper": _ascii(str.isupper),
    "word": _ascii(lambda c: c.isalnum() or c == "_"), "xdigit": _ascii(lambda c: c in
                                                                        "0123456789abcdefABCDEF"),
}
