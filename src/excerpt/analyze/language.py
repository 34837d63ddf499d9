"""Which analyzer a text needs."""

from __future__ import annotations

import re

# Syllables, conjoining jamo (all blocks), compatibility jamo, and the enclosed (㉮, ㈀) and
# halfwidth forms that NFKC turns into Hangul: a text is detected the same before and after
# ``analyze`` normalises it.
HANGUL = re.compile(
    "[\u1100-\u11ff\u3130-\u318f\u3200-\u321e\u3260-\u327e\ua960-\ua97f"
    "\uac00-\ud7af\ud7b0-\ud7ff\uffa0-\uffdc]"
)


def detect_language(text: str) -> str:
    """``"ko"`` when ``text`` contains any Hangul letter, else ``"en"``.

    One Hangul letter is enough, with no share threshold, because the Korean analyzer gives
    exactly the English tokens for everything outside Hangul.  So a mostly-English text with a
    Korean word loses nothing by going the Korean way, while a threshold would leave that word
    unanalyzed (장학금을) in the document and analyzed (장학금) in a short query.
    """
    if text.isascii():
        return "en"
    return "ko" if HANGUL.search(text) else "en"
