"""core/validation: patterns that the OpenAPI schema (ECMA-262) and the service (Python) read alike."""

from __future__ import annotations


def test_not_blank_pattern_agrees_with_python_and_ecma_262() -> None:
    """A value is blank to the schema (ECMA-262 ``\\s``) exactly when it is blank to the service
    (Python ``str.isspace``): schemathesis found ``qStr=%C2%85`` admitted by ``\\S`` and refused with 422."""
    import re
    import unicodedata

    from aisle.core.validation import NOT_BLANK_PATTERN

    # ECMA-262 WhiteSpace (TAB, VT, FF, ZWNBSP, USP = category Zs) and LineTerminator (LF, CR, LS, PS)
    ecma = {"\t", "\v", "\f", "\ufeff", "\n", "\r", "\u2028", "\u2029"}
    ecma |= {chr(c) for c in range(0x110000) if unicodedata.category(chr(c)) == "Zs"}
    python = {chr(c) for c in range(0x110000) if chr(c).isspace()}
    refused = {chr(c) for c in range(0x110000) if not re.search(NOT_BLANK_PATTERN, chr(c))}
    assert refused == ecma | python
    assert re.search(NOT_BLANK_PATTERN, "\u0085 nike")
